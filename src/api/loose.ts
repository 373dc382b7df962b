import type { DescMessage, Message, MessageShape } from "@bufbuild/protobuf";
import { type FieldInfo, type GeneratedMessage, isMessageOf } from "../wire/generated.js";
import { setOwn } from "../wire/reader.js";
import { create, messages } from "./messages.js";
import { type IntegerKind, checkInteger } from "./integers.js";

/** A protocol wrapper message (`OptionalInt64`, `OptionalString`, ...): one field named value. */
export type Wrapper = { $typeName: `nri.pkg.api.${string}.Optional${string}`; value: unknown };

/**
 * What a plugin may give wherever a protocol message is expected: the message itself, or a plain
 * object of its fields, all optional, where every 64-bit integer may be a number and every
 * `Optional*` wrapper may be its bare value (`shares: 512` for `shares: { value: 512n }`).
 */
export type Loose<T> = T extends bigint
  ? bigint | number
  : T extends Uint8Array
    ? Uint8Array
    : T extends readonly (infer U)[]
      ? Loose<U>[]
      : T extends Wrapper
        ? Loose<T["value"]> | LooseFields<T>
        : T extends object
          ? LooseFields<T>
          : T;

/** The fields of a message, each optional and loose. */
export type LooseFields<T> = { [K in keyof T as K extends "$typeName" | "$unknown" ? never : K]?: Loose<T[K]> | undefined };

/** A loose message of a schema. */
export type LooseMessage<Desc extends DescMessage> = Loose<MessageShape<Desc>>;

const WRAPPER = /^nri\.pkg\.api\.v1(alpha|beta)1\.Optional[A-Za-z0-9]+$/u;

/*
 * The walk below needs, for each message type, its fields' names, kinds, scalar types and the
 * message types they hold: the table generated with the codecs when there is one (no descriptor
 * decoded), the descriptor otherwise (a message type of another package).
 */

/** What the walk knows of a field: a FieldInfo, or a protobuf-es DescField (the same names). */
type FieldLike = Omit<FieldInfo, "message"> & { readonly message?: string | DescMessage };

interface Fields {
  readonly typeName: string;
  readonly byName: ReadonlyMap<string, FieldLike>;
}

const tables = new Map<string, Fields>();

function fieldsOf(desc: string | DescMessage): Fields {
  const typeName = typeof desc === "string" ? desc : desc.typeName;
  let t = tables.get(typeName);
  if (t === undefined) {
    const g = messages.generated(typeName);
    let list: readonly FieldLike[];
    if (g !== undefined) list = g.fields();
    else if (typeof desc !== "string") list = desc.fields as unknown as FieldLike[];
    else throw new Error(`nri: no generated code for message ${typeName}: import its codec module`);
    t = { typeName, byName: new Map(list.map((f) => [f.localName, f])) };
    tables.set(typeName, t);
  }
  return t;
}

/* ScalarType numbers (google.protobuf.FieldDescriptorProto.Type) of the integer kinds. */
function integerKind(scalar: number | undefined): IntegerKind | undefined {
  switch (scalar) {
    case 3: // INT64
    case 18: // SINT64
    case 16: // SFIXED64
      return "int64";
    case 4: // UINT64
    case 6: // FIXED64
      return "uint64";
    case 5: // INT32
    case 17: // SINT32
    case 15: // SFIXED32
      return "int32";
    case 13: // UINT32
    case 7: // FIXED32
      return "uint32";
    default:
      return undefined;
  }
}

/**
 * The protocol path of field `name` under `parent` (with an element's index or a map's key), made
 * only for an error: a conversion that succeeds builds no path text.
 */
function pathOf(parent: string, name: string, key?: number | string): string {
  const path = parent === "" ? name : `${parent}.${name}`;
  if (key === undefined) return path;
  return typeof key === "number" ? `${path}[${key}]` : `${path}[${JSON.stringify(key)}]`;
}

function scalar(value: unknown, type: number | undefined, parent: string, name: string, key?: number | string): unknown {
  const kind = integerKind(type);
  if (kind === undefined || (typeof value !== "number" && typeof value !== "bigint")) return value;
  const big = checkInteger(value, kind, pathOf(parent, name, key));
  return kind === "int64" || kind === "uint64" ? big : Number(big);
}

function message(value: unknown, desc: string | DescMessage, parent: string, name: string, key?: number | string): unknown {
  if (value === undefined || value === null || (typeof value === "object" && "$typeName" in value && typeof value.$typeName === "string")) return value;
  const typeName = typeof desc === "string" ? desc : desc.typeName;
  if (WRAPPER.test(typeName) && (typeof value !== "object" || Array.isArray(value))) value = { value };
  return fields(value as Record<string, unknown>, fieldsOf(desc), pathOf(parent, name, key));
}

function fields(obj: Record<string, unknown>, desc: Fields, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    const field = desc.byName.get(key);
    // A key `__proto__` (from JSON.parse, say) stays an own property: never the copy's prototype.
    setOwn(out, key, field === undefined || value === undefined ? value : fieldValue(value, field, path));
  }
  return out;
}

function fieldValue(value: unknown, f: FieldLike, parent: string): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return scalar(value, f.scalar, parent, f.name);
    case "message":
      return message(value, f.message!, parent, f.name);
    case "list":
      if (!Array.isArray(value)) return value;
      if (f.listKind === "scalar") return value.map((v, i) => scalar(v, f.scalar, parent, f.name, i));
      if (f.listKind === "message") return value.map((v, i) => message(v, f.message!, parent, f.name, i));
      return value;
    case "map": {
      if (typeof value !== "object" || value === null) return value;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(value)) {
        const v = (value as Record<string, unknown>)[k];
        setOwn(out, k, f.mapKind === "scalar" ? scalar(v, f.scalar, parent, f.name, k) : f.mapKind === "message" ? message(v, f.message!, parent, f.name, k) : v);
      }
      return out;
    }
    default:
      return value;
  }
}

/**
 * The message of `type` (a schema, or the generated code of a message) from a loose value (see
 * Loose): numbers become the bigints of 64-bit fields and bare values their wrappers, every
 * integer range-checked, errors naming the field by its protocol path. A message passes through as
 * it is.
 */
export function toMessage<Desc extends DescMessage>(
  type: Desc | GeneratedMessage<Desc>,
  value: LooseMessage<Desc> | MessageShape<Desc> | undefined | null,
): MessageShape<Desc> {
  if (isMessageOf(value, type.typeName)) return value as MessageShape<Desc>;
  const generated = "kind" in type ? messages.generated(type.typeName) : type;
  if (generated !== undefined) return generated.create(looseInit(type.typeName, value)) as MessageShape<Desc>;
  const schema = type as Desc;
  const init = value === undefined || value === null ? {} : fields(value as Record<string, unknown>, fieldsOf(schema), "");
  return create(schema, init as never);
}

/** @internal toMessage for a message type with generated code, by name (endpoints have no schema). */
export function toGeneratedMessage(message: GeneratedMessage, value: unknown): Message {
  return isMessageOf(value, message.typeName) ? (value as Message) : message.create(looseInit(message.typeName, value));
}

function looseInit(typeName: string, value: unknown): Record<string, unknown> {
  return value === undefined || value === null ? {} : fields(value as Record<string, unknown>, fieldsOf(typeName), "");
}
