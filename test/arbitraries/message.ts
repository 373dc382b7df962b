import fc from "fast-check";
import { ScalarType, create } from "@bufbuild/protobuf";
import type { DescField, DescFile, DescMessage, DescEnum, Message, MessageShape } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { concat } from "../support/bytes.js";

/**
 * fast-check arbitraries derived from protobuf-es descriptors, so every message of every protocol
 * revision is covered without a hand-written generator. Values are built with `create()` and use
 * the runtime representation of protobuf-es 2: bigint for 64-bit integers (string under
 * `jstype = JS_STRING`), numbers for enums (including values the enum does not declare).
 */

export interface MessageArbitraryOptions {
  /** Nesting levels of message fields below the root; deeper message fields stay unset. Default 3. */
  readonly maxDepth?: number;
  /** Most elements of a repeated field and most entries of a map. Default 3. */
  readonly maxLength?: number;
  /** Most UTF-16 units of a string value and bytes of a bytes value. Default 8 and 16. */
  readonly maxTextLength?: number;
  /**
   * Arbitraries to use for whole message types, by full name, instead of deriving them, e.g. a
   * `google.protobuf.Any` that packs a registered message so JSON can encode it.
   */
  readonly overrides?: Readonly<Record<string, fc.Arbitrary<Message>>>;
}

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;
const UINT32_MAX = 0xffffffff;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;
/** Largest field number protobuf allows (2^29 - 1). */
export const MAX_FIELD_NUMBER = 0x1fffffff;

/** Integers with their extremes and the varint length boundaries weighted in. */
function int32(): fc.Arbitrary<number> {
  return fc.oneof(
    fc.constantFrom(0, 1, -1, 127, 128, 16384, INT32_MIN, INT32_MAX),
    fc.integer({ min: INT32_MIN, max: INT32_MAX }),
  );
}

function uint32(): fc.Arbitrary<number> {
  return fc.oneof(
    fc.constantFrom(0, 1, 127, 128, 16384, INT32_MAX, INT32_MAX + 1, UINT32_MAX),
    fc.integer({ min: 0, max: UINT32_MAX }),
  );
}

function int64(): fc.Arbitrary<bigint> {
  return fc.oneof(
    fc.constantFrom(0n, 1n, -1n, 1n << 31n, 1n << 32n, -(1n << 32n), INT64_MIN, INT64_MAX),
    fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
    fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }),
  );
}

function uint64(): fc.Arbitrary<bigint> {
  return fc.oneof(
    fc.constantFrom(0n, 1n, 1n << 32n, INT64_MAX, INT64_MAX + 1n, UINT64_MAX),
    fc.bigInt({ min: 0n, max: UINT64_MAX }),
    fc.bigInt({ min: 0n, max: 1n << 40n }),
  );
}

/**
 * Strings as protobuf sees them: valid UTF-16 only (no lone surrogates, which have no UTF-8
 * encoding), from the whole Unicode range including astral characters, plus a few fixed hard cases.
 */
export function protoString(maxLength = 8): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom("", "a", "é", "日本語", "😀", "a\u0000b", "\u{10FFFF}", "NRI_version"),
    fc.string({ unit: "binary", maxLength }),
    fc.string({ maxLength }),
  );
}

/** One scalar value of `type` in its protobuf-es runtime representation. */
export function scalarValue(type: ScalarType, longAsString = false, maxTextLength?: number): fc.Arbitrary<unknown> {
  const long = (a: fc.Arbitrary<bigint>): fc.Arbitrary<unknown> =>
    longAsString ? a.map((v) => v.toString()) : a;
  switch (type) {
    case ScalarType.DOUBLE:
      // NaN is left out: protobuf-es `equals` compares floats with IEEE semantics (NaN != NaN).
      return fc.double({ noNaN: true });
    case ScalarType.FLOAT:
      return fc.float({ noNaN: true });
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return int32();
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return uint32();
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return long(int64());
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return long(uint64());
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.STRING:
      return protoString(maxTextLength);
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: maxTextLength ?? 16 });
  }
}

/**
 * Enum numbers: declared values most of the time; for open (proto3) enums also numbers the enum
 * does not declare, which proto3 keeps as they are.
 */
export function enumValue(desc: DescEnum): fc.Arbitrary<number> {
  const declared = fc.constantFrom(...desc.values.map((v) => v.number));
  if (!desc.open) return declared;
  return fc.oneof({ arbitrary: declared, weight: 3 }, { arbitrary: int32(), weight: 1 });
}

/** Map keys of the key's scalar type; 64-bit keys are strings, as protobuf-es stores them. */
function mapKey(type: ScalarType): fc.Arbitrary<string | number | boolean> {
  if (type === ScalarType.DOUBLE || type === ScalarType.FLOAT || type === ScalarType.BYTES) {
    throw new Error(`test: scalar type ${ScalarType[type]} cannot be a map key`);
  }
  return scalarValue(type, true) as fc.Arbitrary<string | number | boolean>;
}

class Builder {
  private readonly cache = new Map<string, fc.Arbitrary<Message>>();

  constructor(
    private readonly maxDepth: number,
    private readonly maxLength: number,
    private readonly maxTextLength: number | undefined,
    private readonly overrides: Readonly<Record<string, fc.Arbitrary<Message>>>,
  ) {}

  /** A message of `schema` whose message fields nest at most `depth` more levels. */
  message(schema: DescMessage, depth: number): fc.Arbitrary<Message> {
    const override = this.overrides[schema.typeName];
    if (override !== undefined) return override;
    const key = `${schema.typeName}@${depth}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;

    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const field of schema.fields) {
      if (field.oneof !== undefined) continue;
      const arb = this.field(field, depth);
      if (arb !== undefined) model[field.localName] = arb;
    }
    for (const oneof of schema.oneofs) {
      const cases: fc.Arbitrary<unknown>[] = [fc.constant({ case: undefined })];
      for (const member of oneof.fields) {
        const arb = this.singular(member, depth);
        if (arb !== undefined) {
          cases.push(arb.map((value) => ({ case: member.localName, value })));
        }
      }
      model[oneof.localName] = fc.oneof(...cases);
    }
    // Every key optional: an absent key leaves the field at its zero value or unset.
    const arb = fc
      .record(model, { requiredKeys: [] })
      .map((init) => create(schema, init as Record<string, unknown>) as Message);
    this.cache.set(key, arb);
    return arb;
  }

  /** The value of a field that is not repeated, or undefined when the depth bound leaves it out. */
  private singular(field: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
    switch (field.fieldKind) {
      case "scalar":
        return scalarValue(field.scalar, field.longAsString, this.maxTextLength);
      case "enum":
        return enumValue(field.enum);
      case "message":
        // protobuf-es holds a singular wrapper (google.protobuf.StringValue, ...) as its scalar.
        if (field.oneof === undefined && isWrapperDesc(field.message)) return scalarValue(field.message.fields[0]!.scalar, false, this.maxTextLength);
        return depth > 0 ? this.message(field.message, depth - 1) : undefined;
      default:
        throw new Error(`test: ${field.toString()} is not singular`);
    }
  }

  /** A list's element or a map's value, or undefined when the depth bound leaves it out. */
  private element(field: Extract<DescField, { fieldKind: "list" | "map" }>, depth: number): fc.Arbitrary<unknown> | undefined {
    if (field.scalar !== undefined) {
      // jstype applies to lists, not to map values.
      return scalarValue(field.scalar, field.fieldKind === "list" && field.listKind === "scalar" && field.longAsString, this.maxTextLength);
    }
    if (field.enum !== undefined) return enumValue(field.enum);
    return depth > 0 ? this.message(field.message, depth - 1) : undefined;
  }

  private field(field: DescField, depth: number): fc.Arbitrary<unknown> | undefined {
    const opts = { maxLength: this.maxLength };
    switch (field.fieldKind) {
      case "scalar":
      case "enum":
      case "message":
        return this.singular(field, depth);
      case "list": {
        const elem = this.element(field, depth);
        return elem === undefined ? undefined : fc.array(elem, opts);
      }
      case "map": {
        const value = this.element(field, depth);
        if (value === undefined) return undefined;
        return fc
          .uniqueArray(fc.tuple(mapKey(field.mapKey), value), {
            ...opts,
            selector: ([k]) => String(k),
          })
          .map((entries) => Object.fromEntries(entries.map(([k, v]) => [String(k), v])));
      }
    }
  }
}

/**
 * Arbitrary messages of `schema`: every field may be set or left at its default, message fields
 * nest down to `maxDepth`, and values cover the extremes of each scalar type, non-ASCII and astral
 * strings, undeclared enum numbers, repeated fields and maps.
 */
export function arbitraryMessage<Desc extends DescMessage>(
  schema: Desc,
  opts: MessageArbitraryOptions = {},
): fc.Arbitrary<MessageShape<Desc>> {
  const builder = new Builder(opts.maxDepth ?? 3, opts.maxLength ?? 3, opts.maxTextLength, opts.overrides ?? {});
  return builder.message(schema, opts.maxDepth ?? 3) as fc.Arbitrary<MessageShape<Desc>>;
}

/** Every message type declared in a file, nested ones included: the generator's own list. */
export { messagesOf as allMessages } from "../../tools/codegen/plan.js";

/** Every enum declared in `file`, nested ones included. */
export function allEnums(file: DescFile): DescEnum[] {
  const out: DescEnum[] = [...file.enums];
  const visit = (m: DescMessage): void => {
    out.push(...m.nestedEnums);
    m.nestedMessages.forEach(visit);
  };
  file.messages.forEach(visit);
  return out;
}

/** One field on the wire, as protobuf-es keeps an unknown field: number, wire type, raw data. */
export interface WireField {
  readonly no: number;
  readonly wireType: WireType;
  readonly data: Uint8Array;
}

function varintBytes(v: bigint): Uint8Array {
  return new BinaryWriter().uint64(v).finish();
}

function tagBytes(no: number, wireType: WireType): Uint8Array {
  return new BinaryWriter().tag(no, wireType).finish();
}

/** Encodes fields in order: tag then data, which is exactly how protobuf-es writes unknown fields. */
export function encodeWireFields(fields: readonly WireField[]): Uint8Array {
  return concat(fields.flatMap((f) => [tagBytes(f.no, f.wireType), f.data]));
}

/**
 * Field numbers `schema` does not declare: small ones (next to the declared numbers, where a
 * later revision would add fields) and any up to 2^29 - 1.
 */
export function unknownFieldNumber(schema: DescMessage): fc.Arbitrary<number> {
  const known = new Set(schema.fields.map((f) => f.number));
  return fc
    .oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: MAX_FIELD_NUMBER }))
    .filter((n) => !known.has(n));
}

/** The data part of a field of each wire type (for groups: the fields inside and the end tag). */
function wireData(no: number): fc.Arbitrary<WireField> {
  const inner = fc.tuple(fc.integer({ min: 1, max: MAX_FIELD_NUMBER }), uint64());
  return fc.oneof(
    uint64().map((v) => ({ no, wireType: WireType.Varint, data: varintBytes(v) })),
    fc.uint8Array({ minLength: 8, maxLength: 8 }).map((data) => ({ no, wireType: WireType.Bit64, data })),
    fc.uint8Array({ minLength: 4, maxLength: 4 }).map((data) => ({ no, wireType: WireType.Bit32, data })),
    fc.uint8Array({ maxLength: 12 }).map((b) => ({
      no,
      wireType: WireType.LengthDelimited,
      data: concat([varintBytes(BigInt(b.length)), b]),
    })),
    fc.array(inner, { maxLength: 3 }).map((members) => ({
      no,
      wireType: WireType.StartGroup,
      data: concat([
        ...members.flatMap(([n, v]) => [tagBytes(n, WireType.Varint), varintBytes(v)]),
        tagBytes(no, WireType.EndGroup),
      ]),
    })),
  );
}

/**
 * Unknown fields for `schema`: 1 to `maxCount` well-formed fields of every wire type (varint,
 * fixed64, length-delimited, fixed32, group) whose numbers `schema` does not declare.
 */
export function arbitraryUnknownFields(
  schema: DescMessage,
  maxCount = 4,
): fc.Arbitrary<{ fields: WireField[]; bytes: Uint8Array }> {
  return fc
    .array(unknownFieldNumber(schema).chain(wireData), { minLength: 1, maxLength: maxCount })
    .map((fields) => ({ fields, bytes: encodeWireFields(fields) }));
}
