import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { fromBinary } from "@bufbuild/protobuf";
import type { DescMessage, Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import { RequestSchema } from "../../gen/ttrpc/request_pb.js";
import { allMessages, arbitraryMessage, arbitraryUnknownFields } from "./message.js";

/**
 * The message arbitrary must reach what the round-trip properties claim to cover: without these
 * checks a generator stuck on zero values would make every property pass vacuously.
 */

const SAMPLES = 400;

/** Every scalar value in a message, walking set fields through lists, maps and nested messages. */
function* leaves(schema: DescMessage, msg: Message, depth = 0): Generator<{ kind: string; value: unknown; depth: number }> {
  const r = reflect(schema, msg);
  for (const f of r.fields) {
    if (!r.isSet(f)) continue;
    switch (f.fieldKind) {
      case "scalar":
      case "enum":
        yield { kind: f.fieldKind === "enum" ? `enum:${f.enum.typeName}` : `scalar:${f.scalar}`, value: r.get(f), depth };
        break;
      case "message":
        yield { kind: "message", value: undefined, depth: depth + 1 };
        yield* leaves(f.message, r.get(f).message, depth + 1);
        break;
      case "list":
        for (const v of r.get(f)) {
          if (f.listKind === "message") yield* leaves(f.message, (v as { message: Message }).message, depth + 1);
          else yield { kind: f.listKind === "enum" ? `enum:${f.enum.typeName}` : `scalar:${f.scalar}`, value: v, depth };
        }
        break;
      case "map":
        for (const [k, v] of r.get(f)) {
          yield { kind: `mapkey:${f.mapKey}`, value: k, depth };
          if (f.mapKind === "message") yield* leaves(f.message, (v as { message: Message }).message, depth + 1);
          else yield { kind: "mapvalue", value: v, depth };
        }
        break;
    }
  }
}

function sampleLeaves(schema: DescMessage, maxDepth?: number) {
  const arb = arbitraryMessage(schema, maxDepth === undefined ? {} : { maxDepth });
  return fc.sample(arb, SAMPLES).flatMap((m) => [...leaves(schema, m)]);
}

describe("arbitraryMessage", () => {
  const container = sampleLeaves(alpha.ContainerSchema);

  it("produces strings with non-ASCII and astral characters, and never a lone surrogate", () => {
    const strings = container.filter((l) => l.kind === "scalar:9").map((l) => l.value as string);
    expect(strings.some((s) => /[^\x00-\x7f]/.test(s))).toBe(true);
    expect(strings.some((s) => /[\u{10000}-\u{10FFFF}]/u.test(s))).toBe(true);
    // A lone surrogate would not survive UTF-8 (TextEncoder substitutes U+FFFD). The decoder
    // keeps a leading U+FEFF, which is a character of the string, not a byte order mark.
    const utf8 = (s: string) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(new TextEncoder().encode(s));
    expect(strings.filter((s) => utf8(s) !== s)).toEqual([]);
  });

  it("produces int64 and uint64 extremes as bigint, and uint32 extremes", () => {
    const int64s = container.filter((l) => l.kind === "scalar:3").map((l) => l.value);
    expect(int64s.every((v) => typeof v === "bigint")).toBe(true);
    expect(int64s).toContain(-(1n << 63n));
    expect(int64s).toContain((1n << 63n) - 1n);
    const uint64s = fc.sample(arbitraryMessage(alpha.OptionalUInt64Schema), SAMPLES).map((m) => m.value);
    expect(uint64s).toContain((1n << 64n) - 1n);
    const uint32s = container.filter((l) => l.kind === "scalar:13").map((l) => l.value);
    expect(uint32s).toContain(0xffffffff);
    const int32s = container.filter((l) => l.kind === "scalar:5").map((l) => l.value);
    expect(int32s).toContain(-0x80000000);
  });

  it("produces declared and undeclared enum numbers", () => {
    const states = container.filter((l) => l.kind === "enum:nri.pkg.api.v1alpha1.ContainerState").map((l) => l.value as number);
    expect(states.some((v) => v >= 1 && v <= 4)).toBe(true);
    expect(states.some((v) => v < 0 || v > 4)).toBe(true);
  });

  it("fills maps, including int32-keyed ones with message values", () => {
    expect(container.some((l) => l.kind === "mapkey:9")).toBe(true);
    const owners = sampleLeaves(alpha.FieldOwnersSchema);
    expect(owners.some((l) => l.kind === "mapkey:5" && (l.value as number) < 0)).toBe(true);
  });

  it("nests message fields down to maxDepth and no further", () => {
    expect(Math.max(...container.map((l) => l.depth))).toBe(3);
    expect(Math.max(...sampleLeaves(alpha.ContainerSchema, 1).map((l) => l.depth))).toBe(1);
  });

  it("produces bytes fields", () => {
    const payloads = fc.sample(arbitraryMessage(RequestSchema), SAMPLES).map((m) => m.payload.length);
    expect(payloads.some((n) => n > 0)).toBe(true);
  });

  it("lists every message of a file, nested ones too, without map entries", () => {
    const names = allMessages(alpha.file_v1alpha1_api).map((m) => m.typeName);
    expect(names).toHaveLength(86);
    expect(names.some((n) => n.endsWith("Entry"))).toBe(false);
  });
});

describe("arbitraryUnknownFields", () => {
  it("uses only numbers the message does not declare, every wire type, and decodes as unknown fields", () => {
    const schema = alpha.ContainerSchema;
    const known = new Set(schema.fields.map((f) => f.number));
    const seen = new Set<number>();
    fc.assert(
      fc.property(arbitraryUnknownFields(schema), ({ fields, bytes }) => {
        for (const f of fields) {
          expect(known.has(f.no)).toBe(false);
          seen.add(f.wireType);
        }
        const m = fromBinary(schema, bytes);
        expect(m.$unknown?.map((u) => u.no)).toEqual(fields.map((f) => f.no));
      }),
    );
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 5]);
  });
});
