import { type DescMessage, type MessageInitShape, type MessageShape, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { RpcError } from "../../src/ttrpc/errors.js";
import { Code } from "../../src/ttrpc/status.js";

/** Reads a message of `schema` from bytes; throws anything on bad input. */
export type DecodeFn = <D extends DescMessage>(schema: D, bytes: Uint8Array) => MessageShape<D>;

/**
 * Decodes an NRI message. protobuf-es throws Error, RangeError or TypeError on bad bytes; every
 * failure becomes RpcError INVALID_ARGUMENT `invalid <type name>: <reason>`, its cause the original.
 */
export function decodeMessage<D extends DescMessage>(schema: D, bytes: Uint8Array, decode: DecodeFn = fromBinary): MessageShape<D> {
  try {
    return decode(schema, bytes);
  } catch (e) {
    throw new RpcError(Code.INVALID_ARGUMENT, `invalid ${schema.typeName}: ${reason(e)}`, { cause: e });
  }
}

/**
 * Encodes an NRI message from an init shape, or from what `build` returns (building may throw
 * too). A value that does not fit its fields is RpcError `code` (INVALID_ARGUMENT for a caller's
 * argument, INTERNAL for a handler's answer) `cannot encode <type name>: <reason>`.
 */
export function encodeMessage<D extends DescMessage>(
  schema: D,
  init: MessageInitShape<D> | (() => MessageShape<D>) | undefined,
  code: Code = Code.INVALID_ARGUMENT,
): Uint8Array {
  try {
    return toBinary(schema, typeof init === "function" ? init() : create(schema, init));
  } catch (e) {
    throw new RpcError(code, `cannot encode ${schema.typeName}: ${reason(e)}`, { cause: e });
  }
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
