import { messages_v1beta1_api } from "../../gen/v1beta1/api_codec.js";
import { messageRegistry } from "../wire/registry.js";

/**
 * The v1beta1 messages as both sides make, copy and code them: by their generated code alone, so
 * neither side loads more of @bufbuild/protobuf than the protoc-gen-es modules do nor decodes a
 * descriptor. A message of another package has no generated code here: making one is an error.
 * `nri-wire/plugin` and `nri-wire/runtime` export the same `create` and `clone`.
 */
export const messages = messageRegistry([messages_v1beta1_api]);

/** A v1beta1 message of a type, from an init of its fields (as protobuf-es's create). */
export const create: typeof messages.create = messages.create;
/** A deep copy of a v1beta1 message (as protobuf-es's clone). */
export const clone: typeof messages.clone = messages.clone;
/** A message's bytes. */
export const toBinary: typeof messages.toBinary = messages.toBinary;
/** A message from its bytes, strictly (the generated decoder's DecodeError on bad bytes). */
export const fromBinary: typeof messages.fromBinary = messages.fromBinary;
/** A message's bytes from an init of its fields. */
export const encodeInit: typeof messages.encodeInit = messages.encodeInit;
