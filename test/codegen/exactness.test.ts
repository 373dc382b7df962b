import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { type DescMessage, type Message, create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { WithStructSchema } from "./gen/kitchen/v1/kitchen_pb.js";
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
