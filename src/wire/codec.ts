import {
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
  create,
  fromBinary as reflectiveFromBinary,
  toBinary as reflectiveToBinary,
} from "@bufbuild/protobuf";
import { DecodeError } from "./errors.js";
import { realSchema } from "./lazy.js";
import { type RegisteredCodec, codecByName, registerCodecByName } from "./registry.js";

/** A message type's non-reflective binary codec, as protoc-gen-nri-wire generates it. */
export interface MessageCodec<Desc extends DescMessage = DescMessage> {
  /** Encodes a message, or an init object of the same shape (absent fields are unset). */
  readonly encode: (message: MessageInitShape<Desc>) => Uint8Array;
  /** Decodes, strictly; malformed bytes are a DecodeError naming the message and field. */
  readonly decode: (bytes: Uint8Array) => MessageShape<Desc>;
}

/** Makes `codec` the one used for `schema` (and every schema of the same type name). */
export function registerCodec<Desc extends DescMessage>(schema: Desc, codec: MessageCodec<Desc>): void {
  registerCodecByName(schema.typeName, codec as unknown as RegisteredCodec);
}

/** The codec registered for `schema`'s type, generated or by registerCodec, if any. */
export function codecFor<Desc extends DescMessage>(schema: Desc): MessageCodec<Desc> | undefined {
  return codecByName(schema.typeName) as MessageCodec<Desc> | undefined;
}

/**
 * `toBinary` of @bufbuild/protobuf, through the generated codec when one is registered for
 * `schema` (the same bytes, faster) and reflectively otherwise.
 */
export function toBinary<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Uint8Array {
  const codec = codecByName(schema.typeName);
  return codec !== undefined ? codec.encode(message as never) : reflectiveToBinary(realSchema(schema), message);
}

/** Encodes an init object of `schema` (a message, or a plain object as `create()` takes). */
export function encodeInit<Desc extends DescMessage>(schema: Desc, init: MessageInitShape<Desc>): Uint8Array {
  const codec = codecByName(schema.typeName);
  if (codec !== undefined) return codec.encode(init as never);
  const real = realSchema(schema);
  return reflectiveToBinary(real, create(real, init));
}

/**
 * `fromBinary` of @bufbuild/protobuf, through the generated codec when one is registered for
 * `schema`. Malformed bytes are always a DecodeError: the reflective decoder's errors (Error,
 * RangeError, TypeError) are wrapped into one naming the message.
 */
export function fromBinary<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array): MessageShape<Desc> {
  const codec = codecByName(schema.typeName);
  if (codec !== undefined) return codec.decode(bytes) as MessageShape<Desc>;
  try {
    return reflectiveFromBinary(realSchema(schema), bytes);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new DecodeError(`decode ${schema.typeName}: ${reason}`, reason, -1, schema.typeName, undefined, { cause: e });
  }
}
