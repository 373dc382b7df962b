import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { type DescMessage, type Message, create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { WithStructSchema } from "./gen/kitchen/v1/kitchen_pb.js";
import { CreateContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { DecodeError, type MessageCodec } from "../../src/wire/index.js";
import { arbitraryMessage, arbitraryUnknownFields } from "../arbitraries/message.js";
import { arbitraryRewrite } from "../arbitraries/noncanonical.js";
import { concat, hex } from "../support/bytes.js";
import { damagedEncodings } from "../support/damaged.js";
import { runs } from "../support/fc.js";
import { MESSAGES, GENERATED_CASES as cases } from "../support/generated-cases.js";

/**
 * The generated codecs against protobuf-es, the reference for the message shapes: for every
 * message of both NRI revisions, the ttrpc envelope, google.rpc.Status and a proto using every
 * construct the generator handles, encoding writes exactly the bytes toBinary writes, and
 * decoding any valid input (canonical, with unknown fields, non-canonical) gives exactly what
 * fromBinary gives. Invalid input only ever raises DecodeError.
 */

/** A smaller depth for the big messages keeps each run quick without losing any field kind. */
function arb(schema: DescMessage): fc.Arbitrary<Message> {
  return arbitraryMessage(schema, { maxDepth: 2, maxLength: 2 });
}

function codec(schema: DescMessage): MessageCodec {
  const c = MESSAGES.codecFor(schema);
  if (c === undefined) throw new Error(`test: no generated codec for ${schema.typeName}`);
  return c;
}

/** Decodes with both and checks they agree exactly, then that re-encoding agrees too. */
function sameDecode(schema: DescMessage, c: MessageCodec, bytes: Uint8Array): void {
  const want = fromBinary(schema, bytes);
  const got = c.decode(bytes);
  expect(got).toStrictEqual(want);
  expect(equals(schema, got, want)).toBe(true);
  expect(hex(c.encode(got))).toBe(hex(toBinary(schema, want)));
}

describe("every message has a generated codec, registered", () => {
  it.each(cases)("%s", (_n, schema) => {
    expect(MESSAGES.codecFor(schema)).toBeDefined();
  });

  it("a message holding google.protobuf.Struct as JSON has none, and goes through protobuf-es", () => {
    expect(MESSAGES.codecFor(WithStructSchema)).toBeUndefined();
    const m = create(WithStructSchema, { fields: { a: 1 }, name: "x" });
    expect(hex(MESSAGES.encodeInit(WithStructSchema, m))).toBe(hex(toBinary(WithStructSchema, m)));
  });
});

describe("encode is byte-identical to toBinary", () => {
  it.each(cases)("%s", (_n, schema) => {
    const c = codec(schema);
    fc.assert(
      fc.property(arb(schema), arbitraryUnknownFields(schema), fc.boolean(), (m, unknown, withUnknown) => {
        expect(hex(c.encode(m))).toBe(hex(toBinary(schema, m)));
        if (withUnknown) {
          // Unknown fields as protobuf-es keeps them, written back after the known ones.
          const u = fromBinary(schema, concat([toBinary(schema, m), unknown.bytes]));
          expect(hex(c.encode(u))).toBe(hex(toBinary(schema, u)));
        }
      }),
      { numRuns: runs(0.3) },
    );
  });
});

/**
 * Encoders write each nested length into one reserved byte and move the value up when its length
 * needs more, and write into a shared scratch buffer that grows (up to 1 MiB, beyond which an
 * encoding gets a buffer of its own): long strings and bytes exercise both.
 */
describe("encode is byte-identical to toBinary for values of any length", () => {
  it.each(cases)("%s: strings and bytes up to 300 units long", (_n, schema) => {
    const c = codec(schema);
    fc.assert(
      fc.property(arbitraryMessage(schema, { maxDepth: 2, maxLength: 2, maxTextLength: 300 }), (m) => {
        expect(hex(c.encode(m))).toBe(hex(toBinary(schema, m)));
      }),
      { numRuns: runs(0.1) },
    );
  });

  /** A CreateContainerRequest whose container has one annotation with `value`. */
  const request = (value: string) => create(CreateContainerRequestSchema, { pod: { id: "pod-1", labels: { app: "a" } }, container: { id: "ctr-1", annotations: { a: value }, env: ["A=1"] } });

  it.each([
    ["ASCII", "x"],
    ["two-byte UTF-8", "é"],
    ["astral", "😀"],
  ])("%s strings on each side of the length boundaries", (_n, unit) => {
    const c = codec(CreateContainerRequestSchema);
    // 42/43 units: the one-byte reservation for short strings; 127/128 and 16383/16384 bytes: a
    // length taking one, two or three bytes, in the string, its map entry and the container.
    for (const n of [0, 1, 42, 43, 63, 64, 120, 127, 128, 129, 8191, 16383, 16384, 16385, 70000]) {
      const m = request(unit.repeat(Math.ceil(n / unit.length)).slice(0, n));
      expect(hex(c.encode(m)), `${n} units`).toBe(hex(toBinary(CreateContainerRequestSchema, m)));
    }
  });

  it("an encoding larger than the scratch buffer, and past its largest size, then a small one", () => {
    const c = codec(CreateContainerRequestSchema);
    for (const n of [100_000, 3_000_000, 10]) {
      const m = request("v".repeat(n));
      const got = c.encode(m);
      expect(got.length, `${n} bytes`).toBe(toBinary(CreateContainerRequestSchema, m).length);
      expect(Buffer.from(got).equals(Buffer.from(toBinary(CreateContainerRequestSchema, m))), `${n} bytes`).toBe(true);
    }
  });

  it("each encoding is an array of its own: the next one does not change it", () => {
    const c = codec(CreateContainerRequestSchema);
    const a = request("first");
    const b = request("second, and longer than the first");
    const encodedA = c.encode(a);
    const encodedB = c.encode(b);
    expect(hex(encodedA)).toBe(hex(toBinary(CreateContainerRequestSchema, a)));
    expect(hex(encodedB)).toBe(hex(toBinary(CreateContainerRequestSchema, b)));
  });
});

describe("encode takes init objects as create() does", () => {
  it.each(cases)("%s", (_n, schema) => {
    fc.assert(
      fc.property(arb(schema), fc.array(fc.nat()), (m, drop) => {
        // A plain object: no $typeName, some fields absent altogether.
        const init: Record<string, unknown> = { ...m };
        delete init.$typeName;
        const keys = Object.keys(init);
        for (const d of drop) if (keys.length > 0) delete init[keys[d % keys.length]!];
        expect(hex(MESSAGES.encodeInit(schema, init))).toBe(hex(toBinary(schema, create(schema, init))));
      }),
      { numRuns: runs(0.2) },
    );
  });
});

describe("decode equals fromBinary on valid input", () => {
  it.each(cases)("%s: canonical, with unknown fields, and non-canonical (order, repeats, unpacked, padded varints)", (_n, schema) => {
    const c = codec(schema);
    const input = arb(schema).chain((m) => {
      const bytes = toBinary(schema, m);
      return fc.oneof(fc.constant(bytes), arbitraryRewrite(schema, bytes), arbitraryRewrite(schema, bytes, true));
    });
    fc.assert(
      fc.property(input, (bytes) => sameDecode(schema, c, bytes)),
      { numRuns: runs(0.4) },
    );
  });

  it.each(cases)("%s: two encodings concatenated merge as protobuf-es merges them", (_n, schema) => {
    const c = codec(schema);
    fc.assert(
      fc.property(arb(schema), arb(schema), (a, b) => sameDecode(schema, c, concat([toBinary(schema, a), toBinary(schema, b)]))),
      { numRuns: runs(0.2) },
    );
  });
});

/** The text of every DecodeError: the message, then the field when one was being read. */
const DECODE_ERROR = /^decode [\w.]+: (field \w+ \(\d+\): |field \d+: )?[a-z][\w -]*[\w)]$/;

function decodesOrFailsCleanly(c: MessageCodec, bytes: Uint8Array): void {
  let m: Message;
  try {
    m = c.decode(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    expect((e as Error).message).toMatch(DECODE_ERROR);
    return;
  }
  // What decodes re-encodes to bytes that decode to the same message.
  expect(c.decode(c.encode(m))).toStrictEqual(m);
}

describe("invalid input raises DecodeError only", () => {
  it.each(cases)("%s: random bytes", (_n, schema) => {
    const c = codec(schema);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 48 }), (bytes) => decodesOrFailsCleanly(c, bytes)),
      { numRuns: runs(0.3) },
    );
  });

  it.each(cases)("%s: valid encodings with bytes changed, inserted or removed", (_n, schema) => {
    const c = codec(schema);
    const damaged = damagedEncodings(schema, arb(schema));
    fc.assert(
      fc.property(damaged, (bytes) => decodesOrFailsCleanly(c, bytes)),
      { numRuns: runs(0.3) },
    );
  });
});
