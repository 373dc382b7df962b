import { describe, expect, it } from "vitest";
import { findingFiles, loadKept } from "../../scripts/fuzz/campaign.js";
import { buildCorpus } from "../../scripts/fuzz/corpus.js";
import { inputToJson } from "../../scripts/fuzz/input-json.js";
import { loadReproducer, targetNamed } from "../../scripts/fuzz/reproducer.js";
import { checkOnce, runTarget } from "../../scripts/fuzz/run.js";
import { fuzzTargets } from "../../scripts/fuzz/targets.js";
import { numRuns, seed } from "../support/fc.js";

// `npm run fuzz` at a short depth: NRI_WIRE_NUM_RUNS=100 (the default) gives 2,000 inputs per target.
const inputs = numRuns * 20;
const corpus = buildCorpus(seed >>> 0);
const targets = fuzzTargets(corpus);
const CAMPAIGN = "scripts/fuzz/campaign";

describe("fuzz targets (npm run fuzz)", () => {
  for (const target of targets) {
    it(`${target.name}: every input ends in a correct result or its documented error`, () => {
      const r = runTarget(target, { seed: seed >>> 0, count: inputs });
      console.log(`${r.name}: ${r.inputs} inputs, ${r.ok} ok, ${r.errors} documented errors, slowest ${r.maxMs.toFixed(2)} ms`);
      // A finding's input in full, to save as a reproducer (npm run fuzz -- --replay).
      expect(r.firstFindings.map((f) => `#${f.index}: ${f.message}; input ${JSON.stringify(inputToJson(f.input))}`)).toEqual([]);
      // Both outcomes are reached, so the target is not stuck on one side.
      expect(r.ok).toBeGreaterThan(0);
      expect(r.errors).toBeGreaterThan(0);
    });
  }

  it("the campaign's kept inputs (one per outcome reached) still end in a correct result or a documented error", () => {
    let n = 0;
    for (const target of targets) {
      for (const k of loadKept(CAMPAIGN, target.name).kept) {
        n++;
        expect(checkOnce(target, k.input), `${target.name}: ${k.outcome}`).toBeUndefined();
      }
    }
    expect(n).toBeGreaterThan(0);
  });

  it("every finding the campaign saved is fixed", () => {
    for (const file of findingFiles(CAMPAIGN)) {
      const r = loadReproducer(file);
      expect(checkOnce(targetNamed(targets, r.target, file), r.input), `${file} (${r.message})`).toBeUndefined();
    }
  });
});
