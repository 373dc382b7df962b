import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { useGoPeers } from "../support/go-peers.js";
import { scenarioArb } from "../arbitraries/adaptation.js";
import { runs, seed } from "../support/fc.js";
import { canonicalError, expectSameAsGo, runGo, runTs, type Scenario, type TsOutcome } from "./adapt-scenario.js";
import { fingerprint, fixedSample, readRecording, RECORDING, recordingOf, SAMPLE, writeRecording } from "./go-errors.js";

/**
 * Random scenarios (1–3 plugins, every kind of adjustment and update, validators) through
 * nri-wire's merge engine and the real Go runtime adaptation, in one batch per Go process. A
 * failure prints the scenario; replay with NRI_WIRE_SEED. A fixed sample's Go error texts are
 * recorded (go-errors.ts), so the texts are judged by Go's words without Go too.
 */

const { hasGo, bin } = useGoPeers({ random: ["adapt-peer", "adapt-peer-random", ["-tags=nri_no_wasm"]] });
const scenarios: Scenario[] = fc.sample(scenarioArb, { numRuns: runs(4), seed });
const UPDATE = process.env.NRI_WIRE_UPDATE_GO_TEXTS === "1";

/** Whether `ts` failed with Go's `goError`: the same text, or one of several rejections when Go reported whichever came first. */
function sameError(ts: TsOutcome, goError: string | null): boolean {
  const mine = ts.error === null ? null : canonicalError(ts.error);
  return mine === goError || (goError !== null && ts.rejections.length > 1 && ts.rejections.map(canonicalError).includes(goError));
}

describe("merge engine: random scenarios", () => {
  it(`never fails other than with Go's text: the errors of a fixed sample (seed ${SAMPLE.seed}, ${SAMPLE.size} scenarios) are the ones the Go runtime gave`, () => {
    const sample = fixedSample();
    const recorded = readRecording();
    expect(recorded, `no recording at ${RECORDING}: run NRI_WIRE_UPDATE_GO_TEXTS=1 npx vitest run test/runtime/adaptation.property.test.ts`).toBeDefined();
    expect(recorded!.map((r) => r.scenario), "the sample is not the one recorded (the arbitraries changed?): record again with NRI_WIRE_UPDATE_GO_TEXTS=1").toEqual(sample.map(fingerprint));
    const differ = sample.flatMap((s, i) => {
      const ts = runTs(s);
      return sameError(ts, recorded![i]!.error) ? [] : [`scenario ${i}: ts ${JSON.stringify(ts.error)}, go ${JSON.stringify(recorded![i]!.error)}`];
    });
    expect(differ).toEqual([]);
    // Every kind of failure Go has is in the sample.
    const errors = recorded!.map((r) => r.error ?? "");
    for (const kind of [/^plugins ".*" and ".*" both tried to set /u, /^validator ".*" rejected container adjustment, reason: /u, /^plugin ".*" asked update of ".*" during creation$/u, /^[abc] failed$/u]) {
      expect(errors.some((e) => kind.test(e)), String(kind)).toBe(true);
    }
  });

  it("fails only with the errors that carry Go's texts, on any seed", () => {
    // runTs rethrows anything but an AdaptationError or a scripted plugin's own error.
    for (const s of scenarios) runTs(s);
  });

  it("reaches successes, conflicts, rejections and every event", () => {
    const outcomes = scenarios.map(runTs);
    const share = (pred: (o: TsOutcome, s: Scenario) => boolean) => outcomes.filter((o, i) => pred(o, scenarios[i]!)).length / outcomes.length;
    expect(share((o) => o.error === null)).toBeGreaterThan(0.2);
    expect(share((o) => o.error?.includes("both tried to set") === true)).toBeGreaterThan(0.1);
    expect(share((o) => o.error?.startsWith("validator ") === true)).toBeGreaterThan(0.01);
    for (const event of ["CreateContainer", "UpdateContainer", "StopContainer"]) expect(share((_, s) => s.event === event)).toBeGreaterThan(0.05);
  });

  it.skipIf(!hasGo)(`the recorded errors are what the Go runtime answers now${UPDATE ? " (recording them again)" : ""}`, async () => {
    const sample = fixedSample();
    const now = recordingOf(sample, await runGo(bin.random, sample));
    if (UPDATE) writeRecording(now);
    expect(readRecording()).toEqual(now);
  });

  it.skipIf(!hasGo)(`agree with the Go runtime (NRI_WIRE_SEED=${seed})`, async () => {
    const go = await runGo(bin.random, scenarios);
    scenarios.forEach((s, i) => {
      try {
        expectSameAsGo(runTs(s), go[i]!);
      } catch (err) {
        throw new Error(`scenario ${i} of seed ${seed} differs from Go:\n${JSON.stringify(s)}\n${(err as Error).message}`);
      }
    });
  });
});
