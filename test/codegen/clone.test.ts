import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { type DescMessage, type Message, clone, create, toBinary } from "@bufbuild/protobuf";
import {
  ChoicesSchema,
  MapsSchema,
  OptionalsSchema,
  RepeatedSchema,
  ScalarsSchema,
  TreeSchema,
  WellKnownSchema,
} from "./gen/kitchen/v1/kitchen_pb.js";
import { type WireField, arbitraryMessage, arbitraryUnknownFields } from "../arbitraries/message.js";
import { hex } from "../support/bytes.js";
import { runs } from "../support/fc.js";
import { GENERATED_CASES as cases, generated } from "../support/generated-cases.js";

/*
 * The clone() generated for each message against protobuf-es clone(), the reference: for every
 * message of both NRI revisions, the ttrpc envelope, google.rpc.Status and the kitchen-sink
 * proto, the copy is equal (unknown fields included, nested ones too), has its properties in the
 * same order at every level, shares no object, array or byte array with the original, and
 * encodes to the same bytes.
 */

const isObject = (v: unknown): v is object => v !== null && typeof v === "object";

/** Every object, array and byte array reachable from `v` (`v` included). */
function reachable(v: unknown, out = new Set<object>()): Set<object> {
  if (!isObject(v) || out.has(v)) return out;
  out.add(v);
  if (!ArrayBuffer.isView(v)) for (const x of Object.values(v)) reachable(x, out);
  return out;
}

/** The property names of `v` and of everything in it, in order: what toStrictEqual ignores. */
function shape(v: unknown): unknown {
  if (!isObject(v) || ArrayBuffer.isView(v)) return typeof v;
  if (Array.isArray(v)) return v.map(shape);
  return Object.entries(v).map(([k, x]) => [k, shape(x)]);
}

/** Wrecks everything mutable in `v`: bytes flipped, arrays emptied, properties deleted. */
function wreck(v: unknown): void {
  if (!isObject(v)) return;
  if (v instanceof Uint8Array) {
    for (let i = 0; i < v.length; i++) v[i]! ^= 0xff;
    return;
  }
  for (const x of Object.values(v)) wreck(x);
  if (Array.isArray(v)) v.length = 0;
  else for (const k of Object.keys(v)) if (k !== "$typeName") delete (v as Record<string, unknown>)[k];
}

/** Gives the messages inside `m` (`m` included, in walk order) the unknown fields `pool` offers. */
function withUnknown(m: unknown, pool: (WireField[] | null)[]): void {
  let next = 0;
  const visit = (v: unknown): void => {
    if (!isObject(v) || ArrayBuffer.isView(v)) return;
    for (const x of Object.values(v)) visit(x);
    if (typeof (v as { $typeName?: unknown }).$typeName !== "string") return;
    const u = pool[next++ % Math.max(1, pool.length)];
    if (u !== undefined && u !== null) (v as Message).$unknown = u.map((f) => ({ ...f }));
  };
  visit(m);
}

/** Messages of `schema`, some of them (at any depth) holding unknown fields. */
function arb(schema: DescMessage): fc.Arbitrary<Message> {
  return fc
    .tuple(arbitraryMessage(schema, { maxDepth: 2, maxLength: 2 }), fc.array(fc.option(arbitraryUnknownFields(schema, 2).map((u) => u.fields)), { maxLength: 6 }))
    .map(([m, pool]) => {
      withUnknown(m, pool);
      return m;
    });
}

describe("generated clone() is protobuf-es clone()", () => {
  it.each(cases)("%s: equal, same property order, nothing shared, same bytes", (_n, schema) => {
    const g = generated(schema);
    fc.assert(
      fc.property(arb(schema), (m) => {
        const before = hex(toBinary(schema, m));
        const want = clone(schema, m);
        const got = g.clone(m as never);
        expect(got).toStrictEqual(want);
        expect(shape(got)).toStrictEqual(shape(want));
        expect(hex(toBinary(schema, got))).toBe(before);
        const mine = reachable(m);
        for (const o of reachable(got)) expect(mine.has(o)).toBe(false);
        wreck(got);
        expect(hex(toBinary(schema, m))).toBe(before);
      }),
      { numRuns: runs(0.3) },
    );
  });

  it("of a zero message, each kind of message", () => {
    for (const schema of [ScalarsSchema, OptionalsSchema, RepeatedSchema, MapsSchema, ChoicesSchema, TreeSchema, WellKnownSchema]) {
      const m = create(schema);
      const got = generated(schema).clone(m as never);
      expect(got).toStrictEqual(clone(schema, m));
      expect(shape(got)).toStrictEqual(shape(clone(schema, m)));
    }
  });
});

describe("generated clone() leaves values as protobuf-es clone() does", () => {
  const g = (schema: DescMessage) => generated(schema).clone as unknown as (m: Message) => Message;

  it("a field set to undefined stays absent; -0 and NaN are kept", () => {
    const m = { ...create(OptionalsSchema, { oInt32: 0, oDouble: -0 }), oString: undefined, oMessage: undefined };
    const got = g(OptionalsSchema)(m);
    expect(Object.keys(got)).toEqual(["$typeName", "oDouble", "oInt32"]);
    expect(Object.is((got as typeof m).oDouble, -0)).toBe(true);
    expect(got).toStrictEqual(clone(OptionalsSchema, m));
    const s = create(ScalarsSchema, { fDouble: Number.NaN, fFloat: -0 });
    expect(g(ScalarsSchema)(s)).toStrictEqual(clone(ScalarsSchema, s));
  });

  it("64-bit values held as numbers or strings become the field's representation", () => {
    const loose = { fInt64: 5, fUint64: "18446744073709551615", fSint64: 0, fInt64Str: 7n, fUint64Str: 0 } as never;
    const m = create(ScalarsSchema, loose);
    const got = g(ScalarsSchema)(m);
    expect(got).toStrictEqual(clone(ScalarsSchema, m));
    expect(got).toMatchObject({ fInt64: 5n, fUint64: 18446744073709551615n, fSint64: 0n, fInt64Str: "7", fUint64Str: "0" });
    const r = create(RepeatedSchema, { rInt64: [1, "2"], rInt64Str: [3n] } as never);
    expect(g(RepeatedSchema)(r)).toStrictEqual(clone(RepeatedSchema, r));
    const w = create(WellKnownSchema, { wInt64: 9 } as never);
    expect(g(WellKnownSchema)(w)).toStrictEqual(clone(WellKnownSchema, w));
  });

  it("a map key `__proto__` stays an own entry, not the copy's prototype", () => {
    const m = create(MapsSchema);
    Object.defineProperty(m.stringString, "__proto__", { value: "p", enumerable: true, writable: true, configurable: true });
    Object.defineProperty(m.stringTree, "__proto__", { value: create(TreeSchema, { weight: 1 }), enumerable: true, writable: true, configurable: true });
    const got = g(MapsSchema)(m) as typeof m;
    expect(Object.getPrototypeOf(got.stringString)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(got.stringTree)).toBe(Object.prototype);
    expect(Object.keys(got.stringString)).toEqual(["__proto__"]);
    expect(got).toStrictEqual(clone(MapsSchema, m));
  });

  it("bytes are copied even from a Buffer (whose slice() is a view)", () => {
    const buf = Buffer.from([1, 2, 3]);
    const m = create(ChoicesSchema, { kind: { case: "cBytes", value: buf } });
    const got = g(ChoicesSchema)(m) as typeof m;
    buf[0] = 9;
    expect(got.kind.value).toEqual(new Uint8Array([1, 2, 3]));
  });
});
