import { messages_v1alpha1_api } from "../../gen/v1alpha1/api_codec.js";
import { messages_v1beta1_api } from "../../gen/v1beta1/api_codec.js";
import { messageRegistry } from "../wire/registry.js";

/**
 * The messages of both protocol revisions as the runtime side makes, copies and codes them: by
 * their generated code alone (every message of both has it), so the runtime side loads no more of
 * @bufbuild/protobuf than the protoc-gen-es modules do. A message of another package is an error.
 */
export const messages = messageRegistry([messages_v1alpha1_api, messages_v1beta1_api]);

/** A message of either revision, from an init of its fields (as protobuf-es's create). */
export const create: typeof messages.create = messages.create;
/** A deep copy of a message (as protobuf-es's clone). */
export const clone: typeof messages.clone = messages.clone;
/** A message's bytes. */
export const toBinary: typeof messages.toBinary = messages.toBinary;
/** A message from its bytes, strictly (the generated decoder's DecodeError on bad bytes). */
export const fromBinary: typeof messages.fromBinary = messages.fromBinary;
/** A message's bytes from an init of its fields. */
export const encodeInit: typeof messages.encodeInit = messages.encodeInit;
