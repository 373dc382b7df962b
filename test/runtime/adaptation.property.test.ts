import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { useGoPeers } from "../support/go-peers.js";
import { scenarioArb } from "../arbitraries/adaptation.js";
import { runs, seed } from "../support/fc.js";
import { expectSameAsGo, runGo, runTs, type Scenario, type TsOutcome } from "./adapt-scenario.js";

/**
 * Random scenarios (1–3 plugins, every kind of adjustment and update, validators) through
 * nri-wire's merge engine and the real Go runtime adaptation, in one batch per Go process. A
 * failure prints the scenario; replay with NRI_WIRE_SEED.
 */

const { hasGo, bin } = useGoPeers({ random: ["adapt-peer", "adapt-peer-random", ["-tags=nri_no_wasm"]] });
const scenarios: Scenario[] = fc.sample(scenarioArb, { numRuns: runs(4), seed });

describe("merge engine: random scenarios", () => {
  it("never fails other than with a Go text", () => {
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
