import { afterAll, afterEach, beforeEach } from "vitest";
import { killPeers } from "../interop/support.js";
import { numRuns, seed } from "./fc.js";
import { removeTempDirs } from "./temp.js";
import { endWaits, openWaits } from "./wait.js";

// Printed once per test file so any failure can be replayed with the same seed.
console.log(`fast-check: NRI_WIRE_SEED=${seed} NRI_WIRE_NUM_RUNS=${numRuns}`);

// Waits have no deadline of their own (wait.ts): when a test times out, what it still waited
// for is read at that moment (before its afterEach hooks end things) and named in its failure.
let timedOut: string[] = [];
beforeEach(({ signal }) => {
  signal.addEventListener("abort", () => (timedOut = openWaits()), { once: true });
});

// Registered first, so these run after the file's own hooks (after hooks run in reverse order).
afterEach(() => {
  const still = timedOut;
  timedOut = [];
  endWaits();
  if (still.length > 0) throw new Error(`test: timed out while waiting for ${still.join("; ")}`);
});
afterAll(() => {
  killPeers();
  removeTempDirs();
});
