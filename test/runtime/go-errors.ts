import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import fc from "fast-check";
import { scenarioArb } from "../arbitraries/adaptation.js";
import { canonical, type Outcome, type Scenario } from "./adapt-scenario.js";

/**
 * Go's error texts for a fixed sample of random scenarios, recorded from the Go runtime
 * adaptation (test/interop/adapt-peer) into test/fixtures/go-texts/adaptation-errors.json, so
 * the merge engine's texts are judged by Go's own words even where Go is not installed.
 * adaptation.property.test.ts checks, with Go, that the recording is what Go answers now;
 * `NRI_WIRE_UPDATE_GO_TEXTS=1 npx vitest run test/runtime/adaptation.property.test.ts`
 * records it again (after a change of the arbitraries or of the pinned containerd/nri).
 */

export const RECORDING = resolve(import.meta.dirname, "../fixtures/go-texts/adaptation-errors.json");

/** The sample's seed and size. */
export const SAMPLE = { seed: 36, size: 400 } as const;

/**
 * Whether Go's error for the scenario is one text: with two validators that may reject (scripted
 * ones rejecting, or the default validator), Go reports whichever finished first.
 */
function oneRejecter(s: Scenario): boolean {
  const rejecting = s.plugins.filter((p) => p.validate?.reject === true).length;
  return rejecting + (s.defaultValidator?.enable === true ? 1 : 0) <= 1;
}

/** The fixed sample: scenarios whose Go error does not depend on Go's timing. */
export function fixedSample(): Scenario[] {
  return fc.sample(scenarioArb.filter(oneRejecter), { numRuns: SAMPLE.size, seed: SAMPLE.seed });
}

/** One scenario's recorded line: a fingerprint of the scenario (so a changed sample is noticed) and Go's error, or null. */
export interface Recorded {
  readonly scenario: string;
  readonly error: string | null;
}

/** The fingerprint of a scenario: the first 12 hex digits of the SHA-256 of its JSON. */
export function fingerprint(s: Scenario): string {
  return createHash("sha256").update(JSON.stringify(s)).digest("hex").slice(0, 12);
}

/** What to record of Go's outcomes for the sample (its random orders made stable by `canonical`). */
export function recordingOf(sample: readonly Scenario[], go: readonly Outcome[]): Recorded[] {
  return sample.map((s, i) => ({ scenario: fingerprint(s), error: canonical(go[i]!).error }));
}

/** The recording, or undefined when there is none yet. */
export function readRecording(): Recorded[] | undefined {
  return existsSync(RECORDING) ? (JSON.parse(readFileSync(RECORDING, "utf8")) as Recorded[]) : undefined;
}

/** Writes the recording, one scenario a line. */
export function writeRecording(r: readonly Recorded[]): void {
  writeFileSync(RECORDING, `[\n${r.map((x) => JSON.stringify(x)).join(",\n")}\n]\n`);
}
