import { create, toBinary } from "@bufbuild/protobuf";
import type { DescMessage } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import * as beta from "../../gen/v1beta1/api_pb.js";
import { TranslateError, responseToV1alpha1, responseToV1beta1, toV1alpha1, toV1beta1 } from "../../src/translate/index.js";
import { arbitraryMessage } from "../arbitraries/message.js";
import { runs } from "../support/fc.js";
import { NINE, refMethod } from "./reference.js";

const A = "nri.pkg.api.v1alpha1";
const B = "nri.pkg.api.v1beta1";

/** The response a reference peer would produce: decode as one type, build the other, encode. */
function isEmptyMessage(schema: DescMessage): boolean {
  return schema.fields.length === 0;
}

describe("responses", () => {
  for (const s of [beta.Runtime, beta.Plugin, beta.HostFunctions]) {
    for (const m of s.methods) {
      it(`${s.name}.${m.name}: same bytes both ways, type from the call answered`, () => {
        fc.assert(
          fc.property(arbitraryMessage(m.output), (msg) => {
            const payload = toBinary(m.output, msg);
            const betaCall = { service: s.typeName, method: m.name, payload: new Uint8Array(0) };
            for (const dialect of ["dedicated", "statechange"] as const) {
              const alphaCall = toV1alpha1(betaCall, dialect);
              const alphaMethod = [alpha.Runtime, alpha.Plugin, alpha.HostFunctions]
                .find((x) => x.typeName === alphaCall.service)!
                .methods.find((x) => x.name === alphaCall.method)!;
              // v1alpha1 answer -> v1beta1 response of the original call.
              const up = responseToV1beta1(betaCall, payload);
              expect(up.typeName).toBe(m.output.typeName);
              expect(up.payload).toBe(payload);
              // v1beta1 answer -> v1alpha1 response of the translated call.
              const down = responseToV1alpha1(alphaCall, payload);
              expect(down.typeName).toBe(alphaMethod.output.typeName);
              expect(down.payload).toBe(payload);
              // Empty answers: both types have no fields, so the reference route gives the same (empty) bytes.
              if (isEmptyMessage(m.output)) {
                expect(isEmptyMessage(alphaMethod.output)).toBe(true);
                expect(payload.length).toBe(0);
                expect(toBinary(alphaMethod.output, create(alphaMethod.output)).length).toBe(0);
              }
            }
          }),
          { numRuns: runs(0.1) },
        );
      });
    }
  }

  it("an Empty answer to a StateChange stands for the dedicated response of its event", () => {
    for (const event of NINE) {
      const betaCall = toV1beta1({ service: `${A}.Plugin`, method: "StateChange", payload: Uint8Array.of(0x08, event) });
      expect(responseToV1beta1(betaCall, new Uint8Array(0)).typeName).toBe(`${B}.${refMethod(event)}Response`);
      expect(responseToV1alpha1({ service: `${A}.Plugin`, method: "StateChange" }, new Uint8Array(0)).typeName).toBe(
        `${A}.Empty`,
      );
    }
  });

  it("Shutdown, RegisterPlugin and Log answers are Empty in v1alpha1 and their own type in v1beta1", () => {
    const empty = new Uint8Array(0);
    for (const [service, method, betaType] of [
      ["Plugin", "Shutdown", "ShutdownResponse"],
      ["Runtime", "RegisterPlugin", "RegisterPluginResponse"],
      ["HostFunctions", "Log", "LogResponse"],
    ] as const) {
      expect(responseToV1alpha1({ service: `${A}.${service}`, method }, empty).typeName).toBe(`${A}.Empty`);
      expect(responseToV1beta1({ service: `${B}.${service}`, method }, empty).typeName).toBe(`${B}.${betaType}`);
    }
  });

  it("an unknown method's answer passes through with no type", () => {
    const payload = Uint8Array.of(8, 1);
    expect(responseToV1beta1({ service: `${B}.Plugin`, method: "FutureCall" }, payload)).toEqual({ typeName: undefined, payload });
    expect(responseToV1alpha1({ service: `${A}.Plugin`, method: "FutureCall" }, payload)).toEqual({ typeName: undefined, payload });
  });

  it("rejects a call of the wrong package", () => {
    expect(() => responseToV1beta1({ service: `${A}.Plugin`, method: "Configure" }, new Uint8Array(0))).toThrow(
      new TranslateError("translate: service nri.pkg.api.v1alpha1.Plugin is not a v1beta1 nri service"),
    );
  });
});
