import { describe, expect, it } from "vitest";
import { toV1alpha1, toV1beta1 } from "../../src/translate/index.js";
import { RECORDED_LEGACY_EVENTS, enumName, viaStateChange } from "../support/lifecycle-events.js";
import { type RecordedMessage, hex, loadSession, unhex } from "./vectors.js";

/*
 * The Go reference runtime (containerd/nri v0.12.2) drove the same pods and containers against a
 * v0.12.2 plugin (dedicated calls) and a v0.6.1 plugin (StateChange after the first
 * UNIMPLEMENTED). Translating each recorded StateChange must give, byte for byte, the dedicated
 * request the runtime itself sent for that event in the other session.
 */

const legacy = loadSession("new-runtime--legacy-plugin");
const modern = loadSession("new-runtime--new-plugin");

const requests = (s: RecordedMessage[]) => s.filter((m) => m.type === 1 && m.connId === 1 && m.dir === "r2p");
const stateChanges = requests(legacy).filter((m) => m.method === "StateChange");

/** The dedicated requests of the new-plugin session, per method, in order. */
function dedicatedByMethod(): Map<string, RecordedMessage[]> {
  const out = new Map<string, RecordedMessage[]>();
  for (const m of requests(modern)) out.set(m.method, [...(out.get(m.method) ?? []), m]);
  return out;
}

describe("golden: recorded StateChange requests", () => {
  it("the legacy session has the eight StateChange events its plugin subscribed to (mask 2047: no 12, 13, 14)", () => {
    expect(stateChanges.map((m) => (m.payload as { event: string }).event)).toEqual(viaStateChange(RECORDED_LEGACY_EVENTS).map(enumName));
  });

  it("translate to the dedicated requests the same runtime sent the new plugin, byte for byte", () => {
    const dedicated = dedicatedByMethod();
    const seen: string[] = [];
    for (const m of stateChanges) {
      const out = toV1beta1({ service: m.service, method: m.method, payload: unhex(m.payloadHex!) });
      expect(out.service).toBe("nri.pkg.api.v1beta1.Plugin");
      const expected = dedicated.get(out.method)?.shift();
      expect(expected, `no ${out.method} left in the new-plugin session`).toBeDefined();
      expect(hex(out.payload)).toBe(expected!.payloadHex);
      seen.push(out.method);
    }
    expect(seen).toEqual(viaStateChange(RECORDED_LEGACY_EVENTS));
  });

  it("and those dedicated requests translate back to the recorded StateChange bytes", () => {
    const dedicated = dedicatedByMethod();
    for (const m of stateChanges) {
      const method = toV1beta1({ service: m.service, method: m.method, payload: unhex(m.payloadHex!) }).method;
      const d = dedicated.get(method)!.shift()!;
      const out = toV1alpha1({ service: "nri.pkg.api.v1beta1.Plugin", method: d.method, payload: unhex(d.payloadHex!) }, "statechange");
      expect(out).toEqual({ service: "nri.pkg.api.v1alpha1.Plugin", method: "StateChange", payload: unhex(m.payloadHex!) });
    }
  });

  it("the RunPodSandbox refused with UNIMPLEMENTED carries the same bytes as its StateChange retry", () => {
    const refused = requests(legacy).find((m) => m.method === "RunPodSandbox")!;
    const reply = legacy.find((m) => m.type === 2 && m.connId === 1 && m.streamId === refused.streamId)!;
    expect(reply.status).toEqual({ code: 12, message: "method RunPodSandbox" });
    const retry = toV1alpha1({ service: "nri.pkg.api.v1beta1.Plugin", method: "RunPodSandbox", payload: unhex(refused.payloadHex!) }, "statechange");
    expect(hex(retry.payload)).toBe(stateChanges[0]!.payloadHex);
  });

  it("every other recorded request keeps its bytes through both directions", () => {
    for (const session of [legacy, modern]) {
      for (const m of session) {
        if (m.type !== 1 || m.method === "StateChange") continue;
        const payload = unhex(m.payloadHex!);
        const beta = toV1beta1({ service: m.service, method: m.method, payload });
        expect(beta.method).toBe(m.method);
        expect(beta.payload).toBe(payload);
        expect(toV1alpha1(beta, "dedicated")).toEqual({ service: m.service, method: m.method, payload });
      }
    }
  });
});
