import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { type DescField, create } from "@bufbuild/protobuf";
import { type FieldInfo } from "../../src/wire/codegen.js";
import { arbitraryMessage } from "../arbitraries/message.js";
import { runs } from "../support/fc.js";
import { GENERATED_CASES as cases, generated } from "../support/generated-cases.js";

/*
 * The create() and field table generated for each message against protobuf-es: create_X of an
 * init object is exactly create(schema, init), whatever mix of plain objects, messages and
 * number arrays (for bytes) the init holds, and the field table says what the descriptor says.
 */

/**
 * An init object for `value`: messages lose their `$typeName` (and so are created again) where
 * `strip` says so, bytes become arrays of numbers where `arrays` says so.
 */
function toInit(value: unknown, choose: () => boolean): unknown {
  if (value instanceof Uint8Array) return choose() ? Array.from(value) : value;
  if (Array.isArray(value)) return value.map((v) => toInit(v, choose));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  const isMessage = "$typeName" in value;
  const keep = isMessage && !choose();
  if (keep) return value;
  for (const [k, v] of Object.entries(value)) {
    if (k === "$typeName" || k === "$unknown") continue;
    out[k] = toInit(v, choose);
  }
  return out;
}

function expected(f: DescField): FieldInfo {
  const out: Record<string, unknown> = { localName: f.localName, name: f.name, fieldKind: f.fieldKind };
  if (f.fieldKind === "list") out.listKind = f.listKind;
  if (f.fieldKind === "map") out.mapKind = f.mapKind;
  if (f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar") || (f.fieldKind === "map" && f.mapKind === "scalar")) out.scalar = f.scalar;
  const sub = f.fieldKind === "message" ? f.message : f.fieldKind === "list" && f.listKind === "message" ? f.message : f.fieldKind === "map" && f.mapKind === "message" ? f.message : undefined;
  if (sub !== undefined) out.message = sub.typeName;
  return out as unknown as FieldInfo;
}

describe("generated create() equals protobuf-es create()", () => {
  it.each(cases)("%s", (_n, schema) => {
    const g = generated(schema);
    expect(g.create()).toStrictEqual(create(schema));
    expect(g.create(null)).toStrictEqual(create(schema));
    fc.assert(
      fc.property(arbitraryMessage(schema, { maxDepth: 2, maxLength: 2 }), fc.infiniteStream(fc.boolean()), (message, bits) => {
        const it = bits[Symbol.iterator]();
        const init = toInit({ ...message, $typeName: undefined }, () => it.next().value as boolean) as Record<string, unknown>;
        expect(g.create(init)).toStrictEqual(create(schema, init as never));
      }),
      { numRuns: runs(0.3) },
    );
  });
});

describe("the generated field table says what the descriptor says", () => {
  it.each(cases)("%s", (_n, schema) => {
    expect(generated(schema).fields()).toStrictEqual(schema.fields.map(expected));
  });
});
