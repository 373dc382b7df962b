import { messages_v1beta1_api } from "../../gen/v1beta1/api_codec.js";
import { messageRegistry } from "../wire/registry.js";

/**
 * The v1beta1 messages as both sides make them from what users write, copy and code them: by their generated code
 * alone, so a plugin loads no @bufbuild/protobuf and decodes no descriptor. A message of another
 * package has no generated code here: making one is an error.
 */
export const messages = messageRegistry([messages_v1beta1_api]);

/** A v1beta1 message of a type, from an init of its fields (as protobuf-es's create). */
export const create: typeof messages.create = messages.create;
/** A deep copy of a v1beta1 message (as protobuf-es's clone). */
export const clone: typeof messages.clone = messages.clone;
