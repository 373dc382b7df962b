import { toBinary, create } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import * as beta from "../../gen/v1beta1/api_pb.js";
import { type EventCalls, TranslateError, toV1alpha1, toV1beta1 } from "../../src/translate/index.js";
import { arbitraryMessage } from "../arbitraries/message.js";
import { runs } from "../support/fc.js";
import { NINE, refFromStateChange, refMethod, refToStateChange } from "./reference.js";
import { hex } from "../support/bytes.js";

const A = "nri.pkg.api.v1alpha1";
const B = "nri.pkg.api.v1beta1";
const dialects: readonly EventCalls[] = ["dedicated", "statechange"];
const nineMethods = NINE.map(refMethod);

/** Every method of every v1beta1 / v1alpha1 service, from the descriptors. */
const betaMethods = [beta.Runtime, beta.Plugin, beta.HostFunctions].flatMap((s) => s.methods.map((m) => ({ s, m })));
const alphaMethods = [alpha.Runtime, alpha.Plugin, alpha.HostFunctions].flatMap((s) => s.methods.map((m) => ({ s, m })));

describe("v1beta1 -> v1alpha1", () => {
  for (const { s, m } of betaMethods) {
    for (const dialect of dialects) {
      it(`${s.name}.${m.name} to a ${dialect} peer`, () => {
        fc.assert(
          fc.property(arbitraryMessage(m.input), (msg) => {
            const payload = toBinary(m.input, msg);
            const out = toV1alpha1({ service: s.typeName, method: m.name, payload }, dialect);
            expect(out.service).toBe(`${A}.${s.name}`);
            if (s.name === "Plugin" && m.name === "Shutdown") {
              expect(out.method).toBe("Shutdown");
              expect(out.payload.length).toBe(0); // Empty: the reason cannot travel
            } else if (s.name === "Plugin" && dialect === "statechange" && nineMethods.includes(m.name)) {
              expect(out.method).toBe("StateChange");
              const event = NINE[nineMethods.indexOf(m.name)]!;
              expect(hex(out.payload)).toBe(hex(refToStateChange(event, payload)));
            } else {
              expect(out.method).toBe(m.name);
              expect(out.payload).toBe(payload); // the very same bytes object
            }
            // The target method exists in v1alpha1 with the input type the bytes are for.
            const target = alphaMethods.find((x) => x.s.typeName === out.service && x.m.name === out.method);
            expect(target).toBeDefined();
          }),
          { numRuns: runs(0.2) },
        );
      });
    }
  }

  it("passes unknown methods of known services through, renamed", () => {
    const payload = Uint8Array.of(1, 2, 3);
    for (const dialect of dialects) {
      const out = toV1alpha1({ service: `${B}.Plugin`, method: "FutureCall", payload }, dialect);
      expect(out).toEqual({ service: `${A}.Plugin`, method: "FutureCall", payload });
      expect(out.payload).toBe(payload);
    }
  });
});

describe("v1alpha1 -> v1beta1", () => {
  for (const { s, m } of alphaMethods) {
    it(`${s.name}.${m.name}`, () => {
      const isStateChange = s.name === "Plugin" && m.name === "StateChange";
      const input = isStateChange
        ? arbitraryMessage(alpha.StateChangeEventSchema).map((sc) => {
            sc.event = NINE[Math.abs(sc.event) % NINE.length]!;
            return sc;
          })
        : arbitraryMessage(m.input);
      fc.assert(
        fc.property(input, (msg) => {
          const payload = toBinary(m.input, msg);
          const out = toV1beta1({ service: s.typeName, method: m.name, payload });
          expect(out.service).toBe(`${B}.${s.name}`);
          if (isStateChange) {
            const ref = refFromStateChange(payload);
            expect(out.method).toBe(ref.method);
            expect(hex(out.payload)).toBe(hex(ref.payload));
          } else if (s.name === "Plugin" && m.name === "Shutdown") {
            expect(out.method).toBe("Shutdown");
            expect(hex(out.payload)).toBe(hex(toBinary(beta.ShutdownRequestSchema, create(beta.ShutdownRequestSchema))));
          } else {
            expect(out.method).toBe(m.name);
            expect(out.payload).toBe(payload);
          }
          const target = betaMethods.find((x) => x.s.typeName === out.service && x.m.name === out.method);
          expect(target).toBeDefined();
        }),
        { numRuns: runs(0.2) },
      );
    });
  }

  it("round trip through a StateChange-era peer is the identity on canonical requests", () => {
    for (const event of NINE) {
      const schema = beta.Plugin.methods.find((x) => x.name === refMethod(event))!.input;
      fc.assert(
        fc.property(arbitraryMessage(schema), (msg) => {
          const payload = toBinary(schema, msg);
          const there = toV1alpha1({ service: `${B}.Plugin`, method: refMethod(event), payload }, "statechange");
          const back = toV1beta1(there);
          expect(back.service).toBe(`${B}.Plugin`);
          expect(back.method).toBe(refMethod(event));
          expect(hex(back.payload)).toBe(hex(payload));
        }),
        { numRuns: runs(0.3) },
      );
    }
  });

  it("only Plugin.StateChange and Plugin.Shutdown are special: other services keep those names and bytes", () => {
    const payload = Uint8Array.of(0x08, 0x04);
    for (const service of ["Runtime", "HostFunctions"]) {
      for (const method of ["StateChange", "Shutdown"]) {
        const out = toV1beta1({ service: `${A}.${service}`, method, payload });
        expect(out).toEqual({ service: `${B}.${service}`, method, payload });
        const back = toV1alpha1({ service: `${B}.${service}`, method, payload }, "statechange");
        expect(back.payload).toBe(payload);
      }
    }
  });
});

describe("services", () => {
  it("rejects a service of the wrong package or an unknown one", () => {
    const payload = new Uint8Array(0);
    expect(() => toV1alpha1({ service: `${A}.Plugin`, method: "Configure", payload }, "dedicated")).toThrow(
      new TranslateError("translate: service nri.pkg.api.v1alpha1.Plugin is not a v1beta1 nri service"),
    );
    expect(() => toV1beta1({ service: `${B}.Runtime`, method: "RegisterPlugin", payload })).toThrow(
      new TranslateError("translate: service nri.pkg.api.v1beta1.Runtime is not a v1alpha1 nri service"),
    );
    expect(() => toV1beta1({ service: `${A}.Other`, method: "X", payload })).toThrow(
      new TranslateError("translate: service nri.pkg.api.v1alpha1.Other is not a v1alpha1 nri service"),
    );
  });
});
