import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";

/**
 * A field as the generated code describes it: what the loose-value conversion of plugin helpers
 * needs (names, kind, scalar type, the message type it holds), the subset of a protobuf-es
 * DescField that needs no descriptor decoding.
 */
export interface FieldInfo {
  /** Property name in the message shape (`runtimeHandler`). */
  readonly localName: string;
  /** Name in the .proto file (`runtime_handler`). */
  readonly name: string;
  readonly fieldKind: "scalar" | "enum" | "message" | "list" | "map";
  /** Element kind of a list, value kind of a map. */
  readonly listKind?: "scalar" | "enum" | "message";
  readonly mapKind?: "scalar" | "enum" | "message";
  /** ScalarType of a scalar field, list element or map value. */
  readonly scalar?: number;
  /** Full name of the message type held (singular, list element or map value). */
  readonly message?: string;
}

/**
 * What protoc-gen-nri-wire generates for one message: the codec, `create()` and `clone()`
 * semantics and a field table, all without the message's descriptor.
 */
export interface GeneratedMessage<Desc extends DescMessage = DescMessage> {
  readonly typeName: string;
  /** Encodes a message, or an init object of the same shape (absent fields are unset). */
  encode(message: MessageInitShape<Desc>): Uint8Array;
  /** Decodes, strictly; malformed bytes are a DecodeError naming the message and field. */
  decode(bytes: Uint8Array): MessageShape<Desc>;
  /** What protobuf-es `create(schema, init)` returns for an init object (not a message). */
  create(init?: MessageInitShape<Desc> | null): MessageShape<Desc>;
  /** What protobuf-es `clone(schema, message)` returns: a deep copy sharing nothing mutable. */
  clone(message: MessageShape<Desc>): MessageShape<Desc>;
  /** The fields, built on each call (callers keep what they need). */
  fields(): readonly FieldInfo[];
}

/**
 * What a generated codec module exports for its file (`messages_v1beta1_api`): the generated code
 * of its messages by message name. A MessageRegistry is built from such tables.
 */
export type GeneratedMessages = Readonly<Record<string, GeneratedMessage>>;

/** Whether `value` is a message of `typeName`, as protobuf-es isMessage decides. */
export function isMessageOf(value: unknown, typeName: string): boolean {
  return value !== null && typeof value === "object" && (value as { $typeName?: unknown }).$typeName === typeName;
}

/** An init value of a message field as protobuf-es create() converts it: plain objects are created. */
export function initMessage(value: unknown, typeName: string, create: (init: object) => unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value) || isMessageOf(value, typeName)) return value;
  return create(value);
}

/** A bytes init value as create() takes it: an array of numbers becomes a Uint8Array. */
export function initBytes(value: unknown): unknown {
  return Array.isArray(value) ? new Uint8Array(value as number[]) : value;
}
