import { messages_v1alpha1_api } from "../../gen/v1alpha1/api_codec.js";
import { messages_v1beta1_api } from "../../gen/v1beta1/api_codec.js";
import { reflection } from "../wire/reflection.js";
import { messageRegistry } from "../wire/registry.js";

/**
 * The messages of both protocol revisions as the runtime side makes, copies and codes them: by
 * their generated code, and reflectively for any other message.
 */
export const messages = messageRegistry([messages_v1alpha1_api, messages_v1beta1_api], reflection);

export const { create, clone, toBinary, fromBinary } = messages;
