import type { Message } from "@bufbuild/protobuf";

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
 * semantics and a field table, all without the message's descriptor. Registered by type name when its module loads.
 */
export interface GeneratedMessage<T extends Message = Message> {
  readonly typeName: string;
  /** Encodes a message, or an init object of the same shape (absent fields are unset). */
  readonly encode: (message: never) => Uint8Array;
  /** Decodes, strictly; malformed bytes are a DecodeError naming the message and field. */
  readonly decode: (bytes: Uint8Array) => T;
  /** What protobuf-es `create(schema, init)` returns for an init object (not a message). */
  readonly create: (init?: object | null) => T;
  /** What protobuf-es `clone(schema, message)` returns: a deep copy sharing nothing mutable. */
  readonly clone: (message: never) => T;
  /** The fields, built on each call (callers keep what they need). */
  readonly fields: () => readonly FieldInfo[];
}

/** An encoder and decoder pair for one message type, generated or registered by hand. */
export interface RegisteredCodec {
  readonly encode: (message: never) => Uint8Array;
  readonly decode: (bytes: Uint8Array) => Message;
}

/*
 * Keyed by full type name rather than by schema object: generated code registers without
 * importing (and so decoding) the descriptors, and a schema reached through another path (a
 * field's descriptor, a lazily loaded one) finds the same entry.
 */
const codecs = new Map<string, RegisteredCodec>();
const generated = new Map<string, GeneratedMessage>();

/** Registers generated messages. Generated codec modules call this when imported. */
export function registerMessages(messages: readonly GeneratedMessage[]): void {
  for (const m of messages) {
    codecs.set(m.typeName, m);
    generated.set(m.typeName, m);
  }
}

/** Makes `codec` the one used for the messages named `typeName`. */
export function registerCodecByName(typeName: string, codec: RegisteredCodec): void {
  codecs.set(typeName, codec);
  generated.delete(typeName);
}

/** The codec registered for `typeName`, if any. */
export function codecByName(typeName: string): RegisteredCodec | undefined {
  return codecs.get(typeName);
}

/** The generated message registered for `typeName`, if its codec module has been imported. */
export function generatedMessage(typeName: string): GeneratedMessage | undefined {
  return generated.get(typeName);
}

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
