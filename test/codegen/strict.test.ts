import { describe, expect, it } from "vitest";
import { type DescMessage, fromBinary as reflectiveFromBinary } from "@bufbuild/protobuf";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import { decodeStateChangeEvent } from "../../gen/v1alpha1/api_codec.js";
import { RequestSchema } from "../../gen/ttrpc/request_pb.js";
import * as kitchen from "./gen/kitchen/v1/kitchen_pb.js";
import { DecodeError } from "../../src/wire/index.js";
import { MESSAGES } from "../support/generated-cases.js";
import { TRUNCATED } from "../support/truncated.js";

/**
 * Malformed bytes through the generated decoders: each kind of damage fails with DecodeError and
 * an exact text naming the message and the field, strict where protobuf-go is (the cases marked
 * GAP in test/proto/bad-input.test.ts, which protobuf-es accepts), and never allocating by a
 * length read from the input.
 */

const h = (s: string): Uint8Array => new Uint8Array(Buffer.from(s.replace(/\s+/g, ""), "hex"));

function failure(schema: DescMessage, bytes: string): DecodeError {
  try {
    MESSAGES.fromBinary(schema, h(bytes));
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    return e as DecodeError;
  }
  throw new Error(`test: ${bytes} decoded as ${schema.typeName}`);
}

const text = (schema: DescMessage, bytes: string): string => failure(schema, bytes).message;

describe("a nested message running past its parent", () => {
  it("StateChangeEvent 1a03420341 3d31: the container's env claims 3 bytes of the 1 its parent has left", () => {
    const e = failure(alpha.StateChangeEventSchema, "1a03420341 3d31");
    expect(e.message).toBe("decode nri.pkg.api.v1alpha1.Container: field env (8): length 3 exceeds remaining 1");
    expect([e.typeName, e.field, e.reason]).toEqual(["nri.pkg.api.v1alpha1.Container", 8, "length 3 exceeds remaining 1"]);
    expect(() => decodeStateChangeEvent(h("1a03420341 3d31"))).toThrow(e.message);
  });

  it("GAP closed: a pod whose id runs past the pod (protobuf-es reads it across the parent's end)", () => {
    expect(text(alpha.CreateContainerRequestSchema, "0a 02 0a 05 6162636465 12 00")).toBe(
      "decode nri.pkg.api.v1alpha1.PodSandbox: field id (1): length 5 exceeds remaining 0",
    );
  });
});

describe("wrong wire type for a known field: kept as an unknown field, as protobuf-go does", () => {
  it("a message field sent as varint 0 leaves the field unset", () => {
    const m = MESSAGES.fromBinary(alpha.RunPodSandboxRequestSchema, h("08 00"));
    expect(m.pod).toBeUndefined();
    expect(m.$unknown).toEqual([{ no: 1, wireType: 0, data: h("00") }]);
  });

  it("an int32 sent length-delimited is skipped by its length", () => {
    const m = MESSAGES.fromBinary(alpha.ConfigureResponseSchema, h("12 01 05"));
    expect(m.events).toBe(0);
    expect(m.$unknown).toEqual([{ no: 2, wireType: 2, data: h("01 05") }]);
  });

  it("and then the bytes are read for what they are: a string sent as varint, then a truncated fixed64", () => {
    expect(text(alpha.RegisterPluginRequestSchema, "08 03 616263")).toBe(
      "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field 12: fixed64 exceeds remaining 2",
    );
    expect(text(alpha.ConfigureResponseSchema, "12 01")).toBe(
      "decode nri.pkg.api.v1alpha1.ConfigureResponse: field events (2): length 1 exceeds remaining 0",
    );
  });
});

describe("truncated input", () => {
  // protobuf-es fails on this one with a DataView RangeError of its own, so it is not in TRUNCATED.
  const packedFixed32 = ["inside a packed fixed32 (5 bytes)", kitchen.RepeatedSchema, "4a 05 0102030405", "decode kitchen.v1.Repeated: field r_fixed32 (9): fixed32 exceeds remaining 1"] as const;
  it.each([...TRUNCATED, packedFixed32])("%s", (_what, schema, bytes, want) => {
    expect(text(schema, bytes)).toBe(want);
  });
});

describe("over-long and overflowing varints", () => {
  it.each([
    ["an int64 of 11 bytes", alpha.ConfigureRequestSchema, "20 ffffffffffffffffffff01", "decode nri.pkg.api.v1alpha1.ConfigureRequest: field registration_timeout (4): varint overflows 64 bits"],
    ["GAP closed: a 10-byte int64 whose last byte overflows 64 bits", alpha.ConfigureRequestSchema, "20 ffffffffffffffffff7f", "decode nri.pkg.api.v1alpha1.ConfigureRequest: field registration_timeout (4): varint overflows 64 bits"],
    ["GAP closed: an int32 likewise", alpha.ConfigureResponseSchema, "10 ffffffffffffffffff7f", "decode nri.pkg.api.v1alpha1.ConfigureResponse: field events (2): varint overflows 64 bits"],
    ["GAP closed: an unknown varint of 41 bytes", alpha.UserSchema, `20 ${"ff".repeat(40)}01`, "decode nri.pkg.api.v1alpha1.User: field 4: varint overflows 64 bits"],
    ["a length prefix of 11 bytes", alpha.RegisterPluginRequestSchema, "0a ffffffffffffffffffff01", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): varint overflows 64 bits"],
  ])("%s", (_what, schema, bytes, want) => {
    expect(text(schema, bytes)).toBe(want);
  });

  it("a 10-byte varint ending in 01 is -1 for int64; a padded tag is accepted, as protobuf-go accepts it", () => {
    expect(MESSAGES.fromBinary(alpha.ConfigureRequestSchema, h("20 ffffffffffffffffff01")).registrationTimeout).toBe(-1n);
    expect(MESSAGES.fromBinary(alpha.UserSchema, h("88 80 80 80 80 00 05")).uid).toBe(5);
  });
});

describe("lengths past the end, never allocated", () => {
  it.each([
    ["bytes (ttrpc payload)", RequestSchema, "1a 7f 00", "decode ttrpc.Request: field payload (3): length 127 exceeds remaining 1"],
    ["a map entry", alpha.PodSandboxSchema, "2a 09 0a 01 61", "decode nri.pkg.api.v1alpha1.PodSandbox: field labels (5): length 9 exceeds remaining 3"],
    ["an unknown length-delimited field", alpha.UserSchema, "22 03 00", "decode nri.pkg.api.v1alpha1.User: field 4: length 3 exceeds remaining 1"],
    ["a length near 2^32", alpha.RegisterPluginRequestSchema, "0a ffffffff0f 61", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): length 4294967295 exceeds remaining 1"],
    ["a length near 2^63", alpha.RegisterPluginRequestSchema, "0a ffffffffffffffff7f", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): length 9223372036854776000 exceeds remaining 0"],
  ])("%s", (_what, schema, bytes, want) => {
    expect(text(schema, bytes)).toBe(want);
  });
});

describe("invalid UTF-8 in strings (protobuf-es: a TypeError from TextDecoder)", () => {
  it.each([
    ["bytes ff fe", alpha.RegisterPluginRequestSchema, "0a 02 fffe", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): invalid UTF-8"],
    ["an encoded surrogate (ed a0 80)", alpha.RegisterPluginRequestSchema, "0a 03 eda080", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): invalid UTF-8"],
    ["an overlong NUL (c0 80)", alpha.RegisterPluginRequestSchema, "0a 02 c080", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): invalid UTF-8"],
    ["a truncated sequence (e6 97)", alpha.RegisterPluginRequestSchema, "0a 02 e697", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): invalid UTF-8"],
    ["past U+10FFFF (f4 90 80 80)", alpha.RegisterPluginRequestSchema, "0a 04 f4908080", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): invalid UTF-8"],
    ["a long string", alpha.RegisterPluginRequestSchema, `0a 41 ${"61".repeat(64)}ff`, "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): invalid UTF-8"],
    ["a repeated string", alpha.PodSandboxSchema, "52 01 ff", "decode nri.pkg.api.v1alpha1.PodSandbox: field ips (10): invalid UTF-8"],
    ["a map key", alpha.PodSandboxSchema, "2a 06 0a 02 fffe 1200", "decode nri.pkg.api.v1alpha1.PodSandbox: field labels (5): invalid UTF-8"],
    ["a map value", alpha.PodSandboxSchema, "2a 05 0a 00 12 01 ff", "decode nri.pkg.api.v1alpha1.PodSandbox: field labels (5): invalid UTF-8"],
    ["a nested message's string", alpha.RunPodSandboxRequestSchema, "0a 03 0a 01 80", "decode nri.pkg.api.v1alpha1.PodSandbox: field id (1): invalid UTF-8"],
    ["ttrpc Request.method", RequestSchema, "12 01 ff", "decode ttrpc.Request: field method (2): invalid UTF-8"],
  ])("%s", (_what, schema, bytes, want) => {
    expect(text(schema, bytes)).toBe(want);
  });

  it("every length around the short-string path decodes as TextDecoder does", () => {
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    const field = (bytes: number[]): Uint8Array => new Uint8Array([0x0a, bytes.length, ...bytes]);
    for (let len = 0; len <= 20; len++) {
      // Every ASCII code, NUL and DEL included, lands in every position of some length.
      const ascii = Array.from({ length: len }, (_, i) => (len * 7 + i * 13) % 128);
      expect(MESSAGES.fromBinary(alpha.RegisterPluginRequestSchema, field(ascii)).pluginName).toBe(String.fromCharCode(...ascii));
      for (let at = 0; at + 2 <= len; at++) {
        const accented = ascii.slice();
        accented.splice(at, 2, 0xc3, 0xa9);
        expect(MESSAGES.fromBinary(alpha.RegisterPluginRequestSchema, field(accented)).pluginName).toBe(decoder.decode(new Uint8Array(accented)));
        const broken = ascii.slice();
        broken[at] = 0xff;
        expect(text(alpha.RegisterPluginRequestSchema, Buffer.from(field(broken)).toString("hex"))).toBe("decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): invalid UTF-8");
      }
    }
  });

  it("valid text decodes, an encoded U+FFFD and astral characters included", () => {
    expect(MESSAGES.fromBinary(alpha.RegisterPluginRequestSchema, h("0a 07 efbfbd f09f9880")).pluginName).toBe("\uFFFD😀");
    expect(MESSAGES.fromBinary(alpha.RegisterPluginRequestSchema, h(`0a 42 ${"61".repeat(64)}c3a9`)).pluginName).toBe(`${"a".repeat(64)}é`);
  });
});

describe("tags and groups", () => {
  it.each([
    ["field number 0", alpha.UserSchema, "00 00", "decode nri.pkg.api.v1alpha1.User: invalid field number 0"],
    ["field number 2^30 - 1", alpha.UserSchema, "f8 ff ff ff 1f 05", "decode nri.pkg.api.v1alpha1.User: invalid field number 1073741823"],
    ["wire type 6", alpha.UserSchema, "0e 00", "decode nri.pkg.api.v1alpha1.User: field uid (1): invalid wire type 6"],
    ["wire type 7 inside a map entry", kitchen.MapsSchema, "2a 04 08 01 0f 00", "decode kitchen.v1.Maps: field uint64_double (5): invalid wire type 7"],
    ["a stray end-group", alpha.UserSchema, "24", "decode nri.pkg.api.v1alpha1.User: field 4: unexpected end-group 4"],
    ["an unterminated group", alpha.UserSchema, "23 08 01", "decode nri.pkg.api.v1alpha1.User: field 4: unterminated group 4"],
    ["a group closed by another number", alpha.UserSchema, "23 08 01 2c", "decode nri.pkg.api.v1alpha1.User: field 4: end-group 5 closes group 4"],
  ])("%s", (_what, schema, bytes, want) => {
    expect(text(schema, bytes)).toBe(want);
  });

  it("a well-formed group under an unknown number is kept byte for byte, as protobuf-es keeps it", () => {
    expect(MESSAGES.fromBinary(alpha.UserSchema, h("23 08 01 24")).$unknown).toEqual([{ no: 4, wireType: 3, data: h("08 01 24") }]);
  });
});

describe("nesting depth: the same limit as protobuf-es", () => {
  const groups = (n: number): Uint8Array => h("23".repeat(n) + "24".repeat(n));
  /** A Tree whose parent chain is `n` messages deep below the root. */
  function chain(n: number): Uint8Array {
    let b = new Uint8Array(0);
    for (let i = 0; i < n; i++) {
      const len: number[] = [];
      for (let l = b.length; ; l >>>= 7) {
        if (l < 0x80) {
          len.push(l);
          break;
        }
        len.push((l & 0x7f) | 0x80);
      }
      b = Uint8Array.from([0x0a, ...len, ...b]);
    }
    return b;
  }

  it("99 levels below the root decode in both, 100 fail in both", () => {
    expect(() => reflectiveFromBinary(kitchen.TreeSchema, chain(99))).not.toThrow();
    expect(MESSAGES.fromBinary(kitchen.TreeSchema, chain(99)).parent).toBeDefined();
    expect(() => reflectiveFromBinary(kitchen.TreeSchema, chain(100))).toThrow();
    expect(text(kitchen.TreeSchema, Buffer.from(chain(100)).toString("hex"))).toBe("decode kitchen.v1.Tree: field parent (1): nesting deeper than 100");
  });

  it("99 nested groups are skipped in both, 100 fail in both", () => {
    expect(() => reflectiveFromBinary(alpha.UserSchema, groups(99))).not.toThrow();
    expect(MESSAGES.fromBinary(alpha.UserSchema, groups(99)).$unknown).toHaveLength(1);
    expect(() => reflectiveFromBinary(alpha.UserSchema, groups(100))).toThrow();
    expect(text(alpha.UserSchema, Buffer.from(groups(100)).toString("hex"))).toBe(
      "decode nri.pkg.api.v1alpha1.User: field 4: nesting deeper than 100",
    );
  });
});

describe("the reflective fallback", () => {
  it("wraps protobuf-es errors of a message without a generated codec into DecodeError", () => {
    const e = failure(kitchen.WithStructSchema, "12 01 ff");
    expect(e.message).toBe("decode kitchen.v1.WithStruct: The encoded data was not valid for encoding utf-8");
    expect(e.cause).toBeInstanceOf(TypeError);
  });
});
