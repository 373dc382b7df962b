import { messages_v1alpha1_api } from "../../gen/v1alpha1/api_codec.js";
import { messages_v1beta1_api } from "../../gen/v1beta1/api_codec.js";
import { messageRegistry } from "../wire/registry.js";

/**
 * The messages of both protocol revisions as the runtime side makes, copies and codes them: by
 * their generated code alone (every message of both has it), so the runtime side loads no more of
 * @bufbuild/protobuf than the protoc-gen-es modules do. A message of another package is an error.
 */
export const messages = messageRegistry([messages_v1alpha1_api, messages_v1beta1_api]);

export const { create, clone, toBinary, fromBinary, encodeInit } = messages;
