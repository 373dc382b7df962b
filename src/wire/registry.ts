import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { DecodeError } from "./errors.js";
import { type GeneratedMessage, type GeneratedMessages, isMessageOf } from "./generated.js";
import type { Reflection } from "./reflection.js";
import { errorText } from "../internal/error-text.js";

/** A message type's binary codec. */
export interface MessageCodec<Desc extends DescMessage = DescMessage> {
  /** Encodes a message, or an init object of the same shape (absent fields are unset). */
  readonly encode: (message: MessageInitShape<Desc>) => Uint8Array;
  /** Decodes, strictly; malformed bytes are a DecodeError naming the message and field. */
  readonly decode: (bytes: Uint8Array) => MessageShape<Desc>;
}

/**
 * A message type as a registry takes it: a protobuf-es schema, or the generated code of a message
 * (`messages_v1beta1_api.Container`), which names the type without its descriptor.
 */
export type MessageType<Desc extends DescMessage = DescMessage> = Desc | GeneratedMessage<Desc>;

/**
 * `create`, `clone`, `toBinary` and `fromBinary` of @bufbuild/protobuf over the generated code of
 * the tables a registry was built from: a schema whose type is in a table is served by its
 * generated code (no descriptor walk, the same messages and bytes), any other by the reflective
 * functions the registry was given, and without them it is an error. Lookups are by type name, so
 * a schema reached another way (a field's descriptor) finds the same code; generated code given
 * in a schema's place is used as it is.
 */
export interface MessageRegistry {
  /** The generated code of the messages named `typeName`, if a table holds it. */
  readonly generated: (typeName: string) => GeneratedMessage | undefined;
  /** The codec of `schema`'s type, if a table holds it. */
  readonly codecFor: <Desc extends DescMessage>(schema: MessageType<Desc>) => MessageCodec<Desc> | undefined;
  /** `create()`: a message of `schema` from an init object; a message of the schema is returned as it is. */
  readonly create: <Desc extends DescMessage>(schema: MessageType<Desc>, init?: MessageInitShape<Desc>) => MessageShape<Desc>;
  /** `clone()`: a deep copy sharing nothing mutable. */
  readonly clone: <Desc extends DescMessage>(schema: MessageType<Desc>, message: MessageShape<Desc>) => MessageShape<Desc>;
  /** `toBinary()`. */
  readonly toBinary: <Desc extends DescMessage>(schema: MessageType<Desc>, message: MessageShape<Desc>) => Uint8Array;
  /** Encodes an init object of `schema` (a message, or a plain object as `create()` takes). */
  readonly encodeInit: <Desc extends DescMessage>(schema: MessageType<Desc>, init: MessageInitShape<Desc>) => Uint8Array;
  /**
   * `fromBinary()`. Malformed bytes are always a DecodeError: the reflective decoder's errors
   * (Error, RangeError, TypeError) are wrapped into one naming the message.
   */
  readonly fromBinary: <Desc extends DescMessage>(schema: MessageType<Desc>, bytes: Uint8Array) => MessageShape<Desc>;
}

/**
 * A registry of the generated code in `tables`, falling back to `reflection` (see reflection.ts)
 * for other messages; without it, asking for a message no table holds throws.
 */
export function messageRegistry(tables: readonly GeneratedMessages[], reflection?: Reflection): MessageRegistry {
  const byName = new Map<string, GeneratedMessage>();
  for (const table of tables) for (const m of Object.values(table)) byName.set(m.typeName, m);
  const reflective = (op: string, typeName: string): Reflection => {
    if (reflection === undefined) throw new Error(`wire: ${op} ${typeName}: no generated code, and the registry has no reflective fallback`);
    return reflection;
  };
  const generated = (typeName: string): GeneratedMessage | undefined => byName.get(typeName);
  // Generated code given as the type is used as it is; a schema's type is looked up by name.
  const codeOf = (type: MessageType): GeneratedMessage | undefined => ("kind" in type ? byName.get(type.typeName) : type);
  return {
    generated,
    codecFor: <Desc extends DescMessage>(schema: MessageType<Desc>) => codeOf(schema) as MessageCodec<Desc> | undefined,
    create: <Desc extends DescMessage>(schema: MessageType<Desc>, init?: MessageInitShape<Desc>) => {
      if (isMessageOf(init, schema.typeName)) return init as MessageShape<Desc>;
      const g = codeOf(schema);
      if (g !== undefined) return g.create(init as never) as MessageShape<Desc>;
      return reflective("create", schema.typeName).create(schema as Desc, init);
    },
    clone: <Desc extends DescMessage>(schema: MessageType<Desc>, message: MessageShape<Desc>) => {
      const g = codeOf(schema);
      if (g !== undefined) return g.clone(message as never) as MessageShape<Desc>;
      return reflective("clone", schema.typeName).clone(schema as Desc, message);
    },
    toBinary: <Desc extends DescMessage>(schema: MessageType<Desc>, message: MessageShape<Desc>) => {
      const g = codeOf(schema);
      if (g !== undefined) return g.encode(message as never);
      return reflective("encode", schema.typeName).toBinary(schema as Desc, message);
    },
    encodeInit: <Desc extends DescMessage>(schema: MessageType<Desc>, init: MessageInitShape<Desc>) => {
      const g = codeOf(schema);
      if (g !== undefined) return g.encode(init as never);
      const r = reflective("encode", schema.typeName);
      return r.toBinary(schema as Desc, r.create(schema as Desc, init));
    },
    fromBinary: <Desc extends DescMessage>(schema: MessageType<Desc>, bytes: Uint8Array) => {
      const g = codeOf(schema);
      if (g !== undefined) return g.decode(bytes) as MessageShape<Desc>;
      const r = reflective("decode", schema.typeName);
      try {
        return r.fromBinary(schema as Desc, bytes);
      } catch (e) {
        const reason = errorText(e);
        throw new DecodeError(`decode ${schema.typeName}: ${reason}`, reason, -1, schema.typeName, undefined, { cause: e });
      }
    },
  };
}
