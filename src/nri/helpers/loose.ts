import { type DescField, type DescMessage, type MessageShape, ScalarType, create, isMessage } from "@bufbuild/protobuf";
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

function integerKind(scalar: ScalarType): IntegerKind | undefined {
  switch (scalar) {
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return "int64";
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return "uint64";
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return "int32";
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return "uint32";
    default:
      return undefined;
  }
}

function scalar(value: unknown, type: ScalarType, path: string): unknown {
  const kind = integerKind(type);
  if (kind === undefined || (typeof value !== "number" && typeof value !== "bigint")) return value;
  const big = checkInteger(value, kind, path);
  return kind === "int64" || kind === "uint64" ? big : Number(big);
}

function message(value: unknown, desc: DescMessage, path: string): unknown {
  if (value === undefined || value === null || isMessage(value)) return value;
  if (WRAPPER.test(desc.typeName) && (typeof value !== "object" || Array.isArray(value))) value = { value };
  return fields(value as Record<string, unknown>, desc, path);
}

function fields(obj: Record<string, unknown>, desc: DescMessage, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    const field = desc.fields.find((f) => f.localName === key);
    out[key] = field === undefined || value === undefined ? value : fieldValue(value, field, path === "" ? field.name : `${path}.${field.name}`);
  }
  return out;
}

function fieldValue(value: unknown, f: DescField, path: string): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return scalar(value, f.scalar, path);
    case "message":
      return message(value, f.message, path);
    case "list":
      if (!Array.isArray(value)) return value;
      if (f.listKind === "scalar") return value.map((v, i) => scalar(v, f.scalar, `${path}[${i}]`));
      if (f.listKind === "message") return value.map((v, i) => message(v, f.message, `${path}[${i}]`));
      return value;
    case "map": {
      if (typeof value !== "object" || value === null) return value;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const at = `${path}[${JSON.stringify(k)}]`;
        out[k] = f.mapKind === "scalar" ? scalar(v, f.scalar, at) : f.mapKind === "message" ? message(v, f.message, at) : v;
      }
      return out;
    }
    default:
      return value;
  }
}

/**
 * The message of `schema` from a loose value (see Loose): numbers become the bigints of 64-bit
 * fields and bare values their wrappers, every integer range-checked, errors naming the field by
 * its protocol path. A message passes through as it is.
 */
export function toMessage<Desc extends DescMessage>(schema: Desc, value: LooseMessage<Desc> | MessageShape<Desc> | undefined | null): MessageShape<Desc> {
  if (isMessage(value, schema)) return value;
  const init = value === undefined || value === null ? {} : fields(value as Record<string, unknown>, schema, "");
  return create(schema, init as never);
}
