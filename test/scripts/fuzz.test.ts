import { describe, expect, it } from "vitest";
import { buildCorpus } from "../../scripts/fuzz/corpus.js";
import { runTarget } from "../../scripts/fuzz/run.js";
import { fuzzTargets } from "../../scripts/fuzz/targets.js";
import { numRuns, seed } from "../support/fc.js";

// `npm run fuzz` at a short depth: NRI_WIRE_NUM_RUNS=100 (the default) gives 2,000 inputs per target.
const inputs = numRuns * 20;
const corpus = buildCorpus(seed >>> 0);

describe("fuzz targets (npm run fuzz)", () => {
  for (const target of fuzzTargets(corpus)) {
    it(`${target.name}: every input ends in a correct result or its documented error`, () => {
      const r = runTarget(target, seed >>> 0, inputs);
      console.log(`${r.name}: ${r.inputs} inputs, ${r.ok} ok, ${r.errors} documented errors, slowest ${r.maxMs.toFixed(2)} ms`);
      expect(r.firstFindings).toEqual([]);
      // Both outcomes are reached, so the target is not stuck on one side.
      expect(r.ok).toBeGreaterThan(0);
      expect(r.errors).toBeGreaterThan(0);
    });
  }
});
