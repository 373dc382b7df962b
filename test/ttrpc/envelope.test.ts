import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { RequestSchema, ResponseSchema } from "../../gen/ttrpc/request_pb.js";
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from "../../src/ttrpc/envelope.js";
import { ProtocolError } from "../../src/ttrpc/errors.js";
import { runs } from "../support/fc.js";

// Strings as protobuf-es produces and accepts them: any well-formed UTF-16.
const str = fc.string({ unit: "grapheme", maxLength: 20 });
const safeInt64 = fc.oneof(fc.constant(0), fc.integer(), fc.maxSafeInteger(), fc.maxSafeNat().map((n) => (n === 0 ? 0 : -n)));

const requestArb = fc.record({
  service: str,
  method: str,
  payload: fc.uint8Array({ maxLength: 200 }),
  timeoutNano: safeInt64,
  metadata: fc.array(fc.record({ key: str, value: str }), { maxLength: 4 }),
});

const statusArb = fc.option(
  fc.record({
    code: fc.oneof(fc.integer({ min: 0, max: 16 }), fc.integer({ min: -0x80000000, max: 0x7fffffff })),
    message: str,
    details: fc.array(fc.record({ typeUrl: str, value: fc.uint8Array({ maxLength: 30 }) }), { maxLength: 3 }),
  }),
  { nil: undefined },
);

type RequestFields = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

function referenceRequest(r: RequestFields) {
  return create(RequestSchema, {
    service: r.service,
    method: r.method,
    payload: r.payload,
    timeoutNano: BigInt(r.timeoutNano),
    metadata: r.metadata,
  });
}

describe("ttrpc envelope against the generated reference types", () => {
  it("requests we encode decode with protobuf-es to the same fields", () => {
    fc.assert(
      fc.property(requestArb, (r) => {
        const ref = fromBinary(RequestSchema, encodeRequest(r));
        expect({ ...ref, $typeName: undefined }).toEqual({ ...referenceRequest(r), $typeName: undefined });
      }),
    );
  });

  it("requests protobuf-es encodes decode with ours to the same fields", () => {
    fc.assert(
      fc.property(requestArb, (r) => {
        const got = decodeRequest(toBinary(RequestSchema, referenceRequest(r)));
        expect({ ...got, payload: [...got.payload] }).toEqual({ ...r, payload: [...r.payload] });
      }),
    );
  });

  it("responses agree with protobuf-es in both directions", () => {
    fc.assert(
      fc.property(statusArb, fc.uint8Array({ maxLength: 200 }), (status, payload) => {
        const ref = create(ResponseSchema, {
          payload,
          ...(status === undefined
            ? {}
            : {
                status: create(StatusSchema, {
                  code: status.code,
                  message: status.message,
                  details: status.details.map((d) => create(AnySchema, { typeUrl: d.typeUrl, value: d.value })),
                }),
              }),
        });
        const ours = fromBinary(ResponseSchema, encodeResponse(status, payload));
        expect(toBinary(ResponseSchema, ours)).toEqual(toBinary(ResponseSchema, ref));
        const back = decodeResponse(toBinary(ResponseSchema, ref));
        expect([...back.payload]).toEqual([...payload]);
        expect(back.status === undefined ? undefined : { ...back.status, details: back.status.details.map((d) => ({ typeUrl: d.typeUrl, value: [...d.value] })) }).toEqual(
          status === undefined ? undefined : { ...status, details: status.details.map((d) => ({ typeUrl: d.typeUrl, value: [...d.value] })) },
        );
      }),
    );
  });

  it("a successful response has no status field: an empty payload is zero bytes", () => {
    expect(encodeResponse(undefined, new Uint8Array(0)).length).toBe(0);
  });

  it("random bytes either decode or raise ProtocolError, never anything else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        for (const decode of [decodeRequest, decodeResponse]) {
          try {
            decode(bytes);
          } catch (e) {
            expect(e).toBeInstanceOf(ProtocolError);
          }
        }
      }),
      { numRuns: runs(5) },
    );
  });

  it("decodes a range in place exactly as it decodes a copy of that range, errors included", () => {
    const outcome = (f: () => unknown): unknown => {
      try {
        return { ok: f() };
      } catch (e) {
        return { error: (e as Error).message };
      }
    };
    const withPayload = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      requestArb.map((r) => encodeRequest(r)),
      fc.tuple(statusArb, fc.uint8Array({ maxLength: 40 })).map(([st, p]) => encodeResponse(st, p)),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 16 }), withPayload, fc.uint8Array({ maxLength: 16 }), (before, body, after) => {
        const all = new Uint8Array(before.length + body.length + after.length);
        all.set(before);
        all.set(body, before.length);
        all.set(after, before.length + body.length);
        const start = before.length;
        const end = start + body.length;
        for (const decode of [decodeRequest, decodeResponse]) {
          expect(outcome(() => decode(all, start, end))).toEqual(outcome(() => decode(body.slice())));
        }
      }),
      { numRuns: runs(3) },
    );
  });

  it("skips known fields of the wrong wire type and groups, as protobuf-go does", () => {
    // field 1 as a varint, then a group 6 holding a varint, then the real service name
    const bytes = Uint8Array.of(0x08, 0x01, 0x33, 0x08, 0x05, 0x34, 0x0a, 0x01, 0x73);
    expect(decodeRequest(bytes).service).toBe("s");
  });

  it("names what is wrong with a malformed envelope", () => {
    expect(() => decodeRequest(Uint8Array.of(0x0a, 0x05, 0x61))).toThrow(
      new ProtocolError("ttrpc: invalid request: length 5 exceeds remaining 1 at offset 1"),
    );
    expect(() => decodeRequest(Uint8Array.of(0x0a, 0x02, 0xc3, 0x28))).toThrow(
      new ProtocolError("ttrpc: invalid request: invalid UTF-8 at offset 1"),
    );
    expect(() => decodeRequest(Uint8Array.of(0x0b, 0x10, 0x01))).toThrow(
      new ProtocolError("ttrpc: invalid request: unterminated group 1 at offset 1"),
    );
    expect(() => decodeRequest(Uint8Array.of(0x0b, 0x14))).toThrow(
      new ProtocolError("ttrpc: invalid request: end-group 2 closes group 1 at offset 1"),
    );
    expect(() => decodeRequest(Uint8Array.of(0xff, 0xff, 0xff))).toThrow(
      new ProtocolError("ttrpc: invalid request: truncated varint at offset 0"),
    );
    expect(() => decodeResponse(Uint8Array.of(0x1c))).toThrow(
      new ProtocolError("ttrpc: invalid response: unexpected end-group 3 at offset 0"),
    );
    expect(() => decodeRequest(Uint8Array.of(0x00))).toThrow(new ProtocolError("ttrpc: invalid request: invalid field number 0 at offset 0"));
  });

  it("fuzz findings: a 10-byte varint past 64 bits is refused as protobuf-go does, and int64 max never re-encodes negative", () => {
    // npm run fuzz, seed 20260611, decodeRequest inputs #349 and #76775.
    const past64 = Buffer.from("0a1c6e72692e706b672e6170692e7631616c706861312e52756e74696d65120e5265676973746572506c7567696e1a110a0b706565722d706c7567696e1202313020ffffffffffffffffff0a", "hex");
    expect(() => decodeRequest(past64)).toThrow(new ProtocolError("ttrpc: invalid request: varint overflows 64 bits at offset 66"));
    const int64Max = Buffer.from("0a146e72692e706b672e6170692e763162657461312e20ffffffffffffffff7f1a021801", "hex");
    const r = decodeRequest(int64Max);
    expect(r.timeoutNano).toBe(2 ** 63);
    // 2^63 - 1 is 2^63 as a number; it goes out as int64 max again, not as -2^63.
    expect(fromBinary(RequestSchema, encodeRequest(r)).timeoutNano).toBe((1n << 63n) - 1n);
    expect(decodeRequest(encodeRequest(r)).timeoutNano).toBe(2 ** 63);
    expect(fromBinary(RequestSchema, encodeRequest({ ...r, timeoutNano: -(2 ** 64) })).timeoutNano).toBe(-(1n << 63n));
  });
});
