import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescMessage } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import * as beta from "../../gen/v1beta1/api_pb.js";
import { RequestSchema, ResponseSchema } from "../../gen/ttrpc/request_pb.js";
import { arbitraryMessage } from "../arbitraries/message.js";
import { runs } from "../support/fc.js";
import { hex } from "../support/bytes.js";
import { damagedEncodings } from "../support/damaged.js";
import { TRUNCATED } from "../support/truncated.js";

/**
 * Malformed bytes through protobuf-es 2.17 `fromBinary` with the generated types: what it
 * throws for each kind of damage, with the exact texts (stable for the pinned version), and where
 * it silently accepts bytes the Go reference (protobuf-go) rejects or reads differently. Those
 * cases are marked "GAP": they pin today's behaviour so a change is noticed, and anything that
 * must refuse malformed input (a ttrpc server answering INVALID_ARGUMENT) cannot rely on
 * `fromBinary` alone for them.
 *
 * Error kinds seen: `RangeError("premature EOF")` for anything that runs past the end;
 * `Error("invalid varint")`; `Error("illegal tag: ...")`; `Error("cant skip wire type 4")`;
 * `Error("invalid end group tag")`; `Error("maximum recursion depth reached")`; and for invalid
 * UTF-8 in a string field Node's own `TypeError` from `TextDecoder({fatal: true})`
 * (code ERR_ENCODING_INVALID_ENCODED_DATA). All are `instanceof Error`.
 *
 * The generated codecs (protoc-gen-nri-wire), which the typed services and endpoints use, close
 * every GAP here the way protobuf-go does: test/codegen/strict.test.ts.
 */

const h = (s: string): Uint8Array => new Uint8Array(Buffer.from(s.replace(/\s+/g, ""), "hex"));

/** Every error protobuf-es raises while decoding, as the random-input property checks. */
const KNOWN_ERRORS: readonly RegExp[] = [
  /^premature EOF$/,
  /^invalid varint$/,
  /^illegal tag: field no \d+ wire type \d$/,
  /^illegal tag: varint overflows uint32$/,
  /^cant skip wire type [4-7]$/,
  /^invalid end group tag$/,
  /^maximum recursion depth reached$/,
  /^The encoded data was not valid for encoding utf-8$/,
];

const UTF8_ERROR = "The encoded data was not valid for encoding utf-8";

function decodeError(schema: DescMessage, bytes: Uint8Array): unknown {
  try {
    fromBinary(schema, bytes);
  } catch (e) {
    return e;
  }
  throw new Error(`test: ${hex(bytes)} decoded as ${schema.typeName} without an error`);
}

/** Decoding `bytes` throws a `kind` with exactly `message`; the error is returned for more checks. */
function expectThrows(schema: DescMessage, bytes: Uint8Array, kind: new (message?: string) => Error, message: string): Error {
  const e = decodeError(schema, bytes);
  expect(e).toBeInstanceOf(kind);
  expect((e as Error).message).toBe(message);
  return e as Error;
}

/** Offsets where a top-level field of `bytes` ends (and 0): the only prefixes that are messages. */
function fieldBoundaries(bytes: Uint8Array): Set<number> {
  const reader = new BinaryReader(bytes);
  const out = new Set<number>([0]);
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    reader.skip(wireType, no);
    out.add(reader.pos);
  }
  return out;
}

describe("truncated bytes", () => {
  const schemas: DescMessage[] = [
    alpha.ContainerSchema,
    alpha.PodSandboxSchema,
    alpha.ValidateContainerAdjustmentRequestSchema,
    alpha.ConfigureRequestSchema,
    beta.ShutdownRequestSchema,
    RequestSchema,
    ResponseSchema,
  ];

  it.each(schemas.map((s) => [s.typeName, s] as const))(
    "%s: a prefix is a message only at a top-level field boundary; any other cut is RangeError 'premature EOF'",
    (_name, schema) => {
      fc.assert(
        fc.property(arbitraryMessage(schema, { maxDepth: 2 }), (m) => {
          const bytes = toBinary(schema, m);
          const boundaries = fieldBoundaries(bytes);
          for (let cut = 0; cut < bytes.length; cut++) {
            const prefix = bytes.subarray(0, cut);
            if (boundaries.has(cut)) {
              // Protobuf has no end marker: a prefix ending between fields is a valid message
              // with the later fields missing. Framing (ttrpc lengths) is what catches that.
              expect(hex(toBinary(schema, fromBinary(schema, prefix)))).toBe(hex(prefix));
            } else {
              expectThrows(schema, prefix, RangeError, "premature EOF");
            }
          }
        }),
        { numRuns: runs(0.2) },
      );
    },
  );

  it.each(TRUNCATED.map(([what, schema, bytes]) => [what, schema, bytes] as const))("cut %s: RangeError 'premature EOF'", (_what, schema, bytes) => {
    expectThrows(schema, h(bytes), RangeError, "premature EOF");
  });
});

describe("lengths past the end", () => {
  it.each([
    ["string", alpha.RegisterPluginRequestSchema, "0a 05 61"],
    ["bytes (ttrpc payload)", RequestSchema, "1a 7f 00"],
    ["nested message", alpha.RunPodSandboxRequestSchema, "0a 05 0a 01 61"],
    ["packed repeated", alpha.UserSchema, "1a 09 01"],
    ["map entry", alpha.PodSandboxSchema, "2a 09 0a 01 61"],
    ["unknown length-delimited field", alpha.UserSchema, "22 03 00"],
    ["a length near 2^32", alpha.RegisterPluginRequestSchema, "0a ffffffff0f 61"],
  ])("%s: RangeError 'premature EOF'", (_what, schema, bytes) => {
    expectThrows(schema, h(bytes), RangeError, "premature EOF");
  });

  it("GAP: a nested length that overruns its parent but not the buffer is accepted (Go rejects it)", () => {
    // CreateContainerRequest{pod: 2 bytes} but the pod's id claims 5 bytes: protobuf-es checks
    // nested lengths only against the whole buffer, reads id "abcde" across the parent's end and
    // then takes the following bytes as parent fields (here container = {}).
    const m = fromBinary(alpha.CreateContainerRequestSchema, h("0a 02 0a 05 6162636465 12 00"));
    expect(m.pod?.id).toBe("abcde");
    expect(m.container).toBeDefined();
  });
});

describe("wrong wire type for a known field", () => {
  // protobuf-es reads a known field with the decoder of its declared type whatever the wire type
  // says. protobuf-go (like C++) keeps a field whose wire type does not match as an unknown field.
  it("GAP: string field sent as varint: the varint is taken as the length and the bytes after it as the text", () => {
    const m = fromBinary(alpha.RegisterPluginRequestSchema, h("08 03 616263"));
    expect(m.pluginName).toBe("abc");
    expect(m.$unknown).toBeUndefined();
  });

  it("GAP: message field sent as varint 0: an empty message is set (Go: unknown field, pod unset)", () => {
    const m = fromBinary(alpha.RunPodSandboxRequestSchema, h("08 00"));
    expect(m.pod).toBeDefined();
    expect(m.pod !== undefined && equals(alpha.PodSandboxSchema, m.pod, create(alpha.PodSandboxSchema))).toBe(true);
    expect(m.$unknown).toBeUndefined();
  });

  it("GAP: int32 field sent length-delimited: the length byte is taken as the value", () => {
    expect(fromBinary(alpha.ConfigureResponseSchema, h("12 01")).events).toBe(1);
  });

  it.each([
    ["int32 sent length-delimited with a body", alpha.ConfigureResponseSchema, "12 01 05", "illegal tag: field no 0 wire type 5"],
    ["int32 sent as fixed64", alpha.ConfigureResponseSchema, "11 0102030405060708", "illegal tag: field no 0 wire type 2"],
    ["int64 sent as fixed64", alpha.ConfigureRequestSchema, "21 0102030405060708", "illegal tag: field no 0 wire type 2"],
    ["bool sent length-delimited", alpha.SynchronizeRequestSchema, "1a 01 01", "illegal tag: field no 0 wire type 1"],
    ["enum sent length-delimited", alpha.LogRequestSchema, "12 01 03", "illegal tag: field no 0 wire type 3"],
    ["string sent as fixed32", alpha.RegisterPluginRequestSchema, "0d 02 6162 00", "illegal tag: field no 0 wire type 0"],
    ["message sent as start-group", alpha.RunPodSandboxRequestSchema, "0b 0a 01 61 0c", "illegal tag: field no 0 wire type 1"],
  ])("%s: misread, then fails on the bytes after it: %s", (_what, schema, bytes, message) => {
    expectThrows(schema, h(bytes), Error, message);
  });

  it.each([
    ["string sent as varint, nothing after", alpha.RegisterPluginRequestSchema, "08 03"],
    ["message sent as varint 1", alpha.RunPodSandboxRequestSchema, "08 01"],
    ["string sent as start-group", alpha.RegisterPluginRequestSchema, "0b 02 6162 0c"],
  ])("%s: misread past the end: RangeError 'premature EOF'", (_what, schema, bytes) => {
    expectThrows(schema, h(bytes), RangeError, "premature EOF");
  });

  it("repeated scalars are accepted packed and unpacked, as the spec requires", () => {
    expect(fromBinary(alpha.UserSchema, h("1a 02 05 06")).additionalGids).toEqual([5, 6]);
    expect(fromBinary(alpha.UserSchema, h("18 05 18 06")).additionalGids).toEqual([5, 6]);
    expect(fromBinary(alpha.UserSchema, h("18 05 1a 01 06")).additionalGids).toEqual([5, 6]);
  });
});

describe("invalid UTF-8 in string fields", () => {
  it.each([
    ["string field, bytes ff fe", alpha.RegisterPluginRequestSchema, "0a 02 fffe"],
    ["string field, an encoded surrogate (ed a0 80)", alpha.RegisterPluginRequestSchema, "0a 03 eda080"],
    ["string field, an overlong NUL (c0 80)", alpha.RegisterPluginRequestSchema, "0a 02 c080"],
    ["string field, a truncated sequence (e6 97)", alpha.RegisterPluginRequestSchema, "0a 02 e697"],
    ["repeated string", alpha.PodSandboxSchema, "52 01 ff"],
    ["map key", alpha.PodSandboxSchema, "2a 06 0a 02 fffe 1200"],
    ["map value", alpha.PodSandboxSchema, "2a 05 0a 00 12 01 ff"],
    ["string in a nested message", alpha.RunPodSandboxRequestSchema, "0a 03 0a 01 80"],
    ["ttrpc Request.method", RequestSchema, "12 01 ff"],
  ])("%s: TypeError from the fatal TextDecoder", (_what, schema, bytes) => {
    const e = expectThrows(schema, h(bytes), TypeError, UTF8_ERROR);
    expect((e as { code?: string }).code).toBe("ERR_ENCODING_INVALID_ENCODED_DATA");
  });

  it("bytes fields take any bytes; valid multi-byte UTF-8 decodes", () => {
    expect(hex(fromBinary(RequestSchema, h("1a 02 fffe")).payload)).toBe("fffe");
    expect(fromBinary(alpha.RegisterPluginRequestSchema, h("0a 04 f09f9880")).pluginName).toBe("😀");
  });
});

describe("varints too long", () => {
  it.each([
    ["int64", alpha.ConfigureRequestSchema, "20"],
    ["int32", alpha.ConfigureResponseSchema, "10"],
    ["uint32", alpha.UserSchema, "08"],
    ["enum", alpha.LogRequestSchema, "10"],
    ["bool", alpha.SynchronizeRequestSchema, "18"],
    ["length prefix", alpha.RegisterPluginRequestSchema, "0a"],
  ])("%s with 11 bytes: Error 'invalid varint'", (_what, schema, tag) => {
    expectThrows(schema, h(`${tag} ffffffffffffffffffff01`), Error, "invalid varint");
  });

  it.each([
    ["6 bytes", "88 80 80 80 80 00 05"],
    ["5 bytes over 2^32", "f8 ff ff ff 1f 05"],
  ])("tag of %s: Error 'illegal tag: varint overflows uint32'", (_what, bytes) => {
    const e = decodeError(alpha.UserSchema, h(bytes));
    expect((e as Error).message).toBe("illegal tag: varint overflows uint32");
  });

  it("GAP: an unknown varint field of any length is skipped and kept (Go: at most 10 bytes)", () => {
    // BinaryReader.skip() walks continuation bits without a limit.
    const bytes = h(`20 ${"ff".repeat(40)}01`);
    const m = fromBinary(alpha.UserSchema, bytes);
    expect(m.$unknown?.map((u) => [u.no, u.wireType, u.data.length])).toEqual([[4, 0, 41]]);
    expect(hex(toBinary(alpha.UserSchema, m))).toBe(hex(bytes));
  });

  it("a 10-byte varint is read: ff..ff 01 is -1 for int64", () => {
    expect(fromBinary(alpha.ConfigureRequestSchema, h("20 ffffffffffffffffff01")).registrationTimeout).toBe(-1n);
  });

  it("GAP: a 10-byte varint whose last byte overflows 64 bits is accepted (Go: 'variable length integer overflow')", () => {
    expect(fromBinary(alpha.ConfigureRequestSchema, h("20 ffffffffffffffffff7f")).registrationTimeout).toBe(-1n);
    expect(fromBinary(alpha.ConfigureResponseSchema, h("10 ffffffffffffffffff7f")).events).toBe(-1);
  });

  it("an over-wide varint for a 32-bit field keeps the low 32 bits, as Go does", () => {
    expect(fromBinary(alpha.UserSchema, h("08 ffffffffff01")).uid).toBe(0xffffffff);
    expect(fromBinary(alpha.UserSchema, h("08 8080808010")).uid).toBe(0);
  });
});

describe("invalid tags", () => {
  it.each([0, 1, 2, 3, 4, 5])("field number 0 with wire type %i: Error 'illegal tag: field no 0 wire type N'", (wt) => {
    expectThrows(alpha.UserSchema, Uint8Array.of(wt, 0, 0), Error, `illegal tag: field no 0 wire type ${wt}`);
  });

  it.each([6, 7])("wire type %i (does not exist): Error 'illegal tag: field no 1 wire type N'", (wt) => {
    const e = decodeError(alpha.UserSchema, Uint8Array.of((1 << 3) | wt, 0));
    expect((e as Error).message).toBe(`illegal tag: field no 1 wire type ${wt}`);
  });

  it("the largest field number 2^29 - 1 is a valid (unknown) tag", () => {
    const m = fromBinary(alpha.UserSchema, h("f8 ff ff ff 0f 05"));
    expect(m.$unknown?.map((u) => u.no)).toEqual([0x1fffffff]);
  });
});

describe("group wire types (3 start, 4 end)", () => {
  it("a well-formed group under an unknown number is kept as an unknown field, byte for byte", () => {
    const bytes = h("23 08 01 24");
    const m = fromBinary(alpha.UserSchema, bytes);
    expect(m.$unknown?.map((u) => [u.no, u.wireType, hex(u.data)])).toEqual([[4, 3, "080124"]]);
    expect(hex(toBinary(alpha.UserSchema, m))).toBe(hex(bytes));
  });

  it("an unterminated group: RangeError 'premature EOF'", () => {
    expectThrows(alpha.UserSchema, h("23 08 01"), RangeError, "premature EOF");
  });

  it("a group closed with another field number: Error 'invalid end group tag'", () => {
    expect((decodeError(alpha.UserSchema, h("23 08 01 2c")) as Error).message).toBe("invalid end group tag");
  });

  it("a stray end-group under an unknown number: Error 'cant skip wire type 4'", () => {
    expect((decodeError(alpha.UserSchema, h("24")) as Error).message).toBe("cant skip wire type 4");
  });

  it("a stray end-group under a known number is misread as the field's type, then runs out", () => {
    expectThrows(alpha.UserSchema, h("0c"), RangeError, "premature EOF");
  });

  it("groups nested 100 deep are accepted, 101 deep: Error 'maximum recursion depth reached'", () => {
    const nest = (n: number) => h("23".repeat(n) + "24".repeat(n));
    expect(fromBinary(alpha.UserSchema, nest(99)).$unknown).toHaveLength(1);
    expect((decodeError(alpha.UserSchema, nest(101)) as Error).message).toBe("maximum recursion depth reached");
  });
});

describe("map entries", () => {
  it("an entry without key or value gets the zero key or value, as the spec says", () => {
    expect(fromBinary(alpha.PodSandboxSchema, h("2a 03 12 01 61")).labels).toEqual({ "": "a" });
    expect(fromBinary(alpha.PodSandboxSchema, h("2a 03 0a 01 61")).labels).toEqual({ a: "" });
  });

  it("a repeated key: the last entry wins", () => {
    expect(fromBinary(alpha.PodSandboxSchema, h("2a 06 0a 01 61 12 01 31 2a 06 0a 01 61 12 01 32")).labels).toEqual({ a: "2" });
  });

  it("an unknown field inside an entry is skipped, as Go does (protobuf-es 2.13 failed here)", () => {
    // Entry {3: varint 1, key: "a"}: field 3 is skipped and the key kept, value empty.
    expect(fromBinary(alpha.PodSandboxSchema, h("2a 05 18 01 0a 01 61")).labels).toEqual({ a: "" });
  });
});

describe("random and damaged bytes", () => {
  const schemas: DescMessage[] = [
    alpha.ContainerSchema,
    alpha.PodSandboxSchema,
    alpha.ValidateContainerAdjustmentRequestSchema,
    alpha.FieldOwnersSchema,
    alpha.StateChangeEventSchema,
    alpha.EmptySchema,
    beta.ShutdownRequestSchema,
    RequestSchema,
    ResponseSchema,
  ];

  /** Decoding either succeeds, and the result re-encodes and decodes equal, or throws a known Error. */
  function decodesOrThrowsKnownError(schema: DescMessage, bytes: Uint8Array): void {
    let decoded;
    try {
      decoded = fromBinary(schema, bytes);
    } catch (e) {
      expect(e).toBeInstanceOf(Error);
      const message = (e as Error).message;
      expect(KNOWN_ERRORS.some((re) => re.test(message)), message).toBe(true);
      return;
    }
    const again = fromBinary(schema, toBinary(schema, decoded));
    expect(equals(schema, again, decoded)).toBe(true);
  }

  it.each(schemas.map((s) => [s.typeName, s] as const))(
    "%s: random bytes decode or throw one of the known Errors, nothing else",
    (_name, schema) => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => decodesOrThrowsKnownError(schema, bytes)),
        { numRuns: runs(5) },
      );
    },
  );

  it.each(schemas.map((s) => [s.typeName, s] as const))(
    "%s: valid encodings with bytes changed, inserted or removed decode or throw a known Error",
    (_name, schema) => {
      const damaged = damagedEncodings(schema, arbitraryMessage(schema, { maxDepth: 2 }));
      fc.assert(
        fc.property(damaged, (bytes) => decodesOrThrowsKnownError(schema, bytes)),
        { numRuns: runs(1) },
      );
    },
  );
});
