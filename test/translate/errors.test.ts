import { describe, expect, it } from "vitest";
import type { Event } from "../../gen/v1beta1/api_pb.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { Code } from "../../src/ttrpc/status.js";
import { TranslateError, fromStateChange, toStateChange, toV1beta1 } from "../../src/translate/index.js";
import { expectThrown } from "../support/errors.js";

const caught = (f: () => unknown): TranslateError => expectThrown(TranslateError, f);

const sc = (...bytes: number[]) => caught(() => fromStateChange(Uint8Array.from(bytes))).rawMessage;

describe("TranslateError", () => {
  it("is an RpcError with code INVALID_ARGUMENT, so handlers answer INVALID_ARGUMENT", () => {
    const e = caught(() => fromStateChange(Uint8Array.of(0x08, 4)));
    expect(e).toBeInstanceOf(RpcError);
    expect(e.name).toBe("TranslateError");
    expect(e.code).toBe(Code.INVALID_ARGUMENT);
    expect(e.rawMessage).toBe("translate: StateChange event 4 (CREATE_CONTAINER) has no dedicated call");
    expect(e.message).toBe("invalid_argument: translate: StateChange event 4 (CREATE_CONTAINER) has no dedicated call");
    expect(RpcError.from(e).toStatus()).toEqual({
      code: 3,
      message: "translate: StateChange event 4 (CREATE_CONTAINER) has no dedicated call",
      details: [],
    });
  });

  it("names every event outside the nine", () => {
    expect(sc()).toBe("translate: StateChange event 0 (UNKNOWN) has no dedicated call");
    expect(sc(0x08, 0)).toBe("translate: StateChange event 0 (UNKNOWN) has no dedicated call");
    expect(sc(0x08, 8)).toBe("translate: StateChange event 8 (UPDATE_CONTAINER) has no dedicated call");
    expect(sc(0x08, 10)).toBe("translate: StateChange event 10 (STOP_CONTAINER) has no dedicated call");
    expect(sc(0x08, 12)).toBe("translate: StateChange event 12 (UPDATE_POD_SANDBOX) has no dedicated call");
    expect(sc(0x08, 14)).toBe("translate: StateChange event 14 (VALIDATE_CONTAINER_ADJUSTMENT) has no dedicated call");
    expect(sc(0x08, 15)).toBe("translate: StateChange event 15 (LAST) has no dedicated call");
    expect(sc(0x08, 99)).toBe("translate: StateChange event 99 has no dedicated call");
    expect(sc(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)).toBe(
      "translate: StateChange event -1 has no dedicated call",
    );
    expect(sc(0x08, 0x80, 0x80, 0x80, 0x80, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x01)).toBe(
      "translate: StateChange event -2147483648 has no dedicated call",
    );
  });

  it("reaches callers of toV1beta1 unchanged", () => {
    const e = caught(() => toV1beta1({ service: "nri.pkg.api.v1alpha1.Plugin", method: "StateChange", payload: Uint8Array.of(0x08, 4) }));
    expect(e.rawMessage).toBe("translate: StateChange event 4 (CREATE_CONTAINER) has no dedicated call");
  });

  it("refuses an event outside the nine for toStateChange", () => {
    expect(caught(() => toStateChange(4 as Event, new Uint8Array(0))).rawMessage).toBe(
      "translate: event 4 (CREATE_CONTAINER) is not a StateChange event",
    );
    expect(caught(() => toStateChange(0 as Event, new Uint8Array(0))).rawMessage).toBe(
      "translate: event 0 (UNKNOWN) is not a StateChange event",
    );
  });
});

describe("malformed top-level bytes", () => {
  const p = "translate: invalid StateChangeEvent: ";
  it("varints", () => {
    expect(sc(0x08)).toBe(`${p}field 1 at offset 0: truncated varint`);
    expect(sc(0x80)).toBe(`${p}truncated varint at offset 0`);
    expect(sc(0x08, 1, 0x12)).toBe(`${p}field 2 at offset 2: truncated varint`);
    expect(sc(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02)).toBe(`${p}field 1 at offset 0: varint overflows 64 bits`);
    expect(sc(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00)).toBe(`${p}field 1 at offset 0: varint overflows 64 bits`);
  });

  it("tags", () => {
    expect(sc(0x08, 1, 0x02, 0x00)).toBe(`${p}invalid field number 0 at offset 2`);
    expect(sc(0x80, 0x80, 0x80, 0x80, 0x10)).toBe(`${p}invalid field number 536870912 at offset 0`);
    expect(sc(0x08, 1, 0x0e)).toBe(`${p}invalid wire type 6 at offset 2`);
    expect(sc(0x0f)).toBe(`${p}invalid wire type 7 at offset 0`);
    expect(sc(0x0c)).toBe(`${p}unexpected end-group 1 at offset 0`);
  });

  it("values past the end", () => {
    expect(sc(0x08, 1, 0x12, 0x05, 0x00)).toBe(`${p}field 2 at offset 2: length 5 exceeds remaining 1`);
    expect(sc(0x21, 1, 2, 3)).toBe(`${p}field 4 at offset 0: fixed64 exceeds remaining 3`);
    expect(sc(0x25, 1)).toBe(`${p}field 4 at offset 0: fixed32 exceeds remaining 1`);
  });

  it("groups", () => {
    expect(sc(0x23, 0x08, 0x01)).toBe(`${p}field 4 at offset 0: unterminated group 4`);
    expect(sc(0x23, 0x2c)).toBe(`${p}field 4 at offset 0: end-group 5 closes group 4`);
    expect(sc(0x23, 0x2b, 0x24)).toBe(`${p}field 4 at offset 0: end-group 4 closes group 5`);
    expect(sc(0x23, 0x32, 0x09, 0x00)).toBe(`${p}field 4 at offset 0: length 9 exceeds remaining 1`);
  });

  it("declared fields with the wrong wire type", () => {
    expect(sc(0x0a, 0x00)).toBe(`${p}field 1 at offset 0: wire type 2, want 0`);
    expect(sc(0x08, 1, 0x10, 0x01)).toBe(`${p}field 2 at offset 2: wire type 0, want 2`);
    expect(sc(0x08, 5, 0x1d, 0, 0, 0, 0)).toBe(`${p}field 3 at offset 2: wire type 5, want 2`);
  });

  it("name the dedicated request in the other direction", () => {
    const ds = (event: number, ...bytes: number[]) => caught(() => toStateChange(event as Event, Uint8Array.from(bytes))).rawMessage;
    expect(ds(1, 0x0a, 0x05)).toBe("translate: invalid RunPodSandboxRequest: field 1 at offset 0: length 5 exceeds remaining 0");
    expect(ds(9, 0x0a, 0x00, 0x10, 0x00)).toBe("translate: invalid PostUpdateContainerRequest: field 2 at offset 2: wire type 0, want 2");
    expect(ds(13, 0x0a)).toBe("translate: invalid PostUpdatePodSandboxRequest: field 1 at offset 0: truncated varint");
  });
});
