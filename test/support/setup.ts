import { numRuns, seed } from "./fc.js";

// Printed once per test file so any failure can be replayed with the same seed.
console.log(`fast-check: NRI_WIRE_SEED=${seed} NRI_WIRE_NUM_RUNS=${numRuns}`);
