import { afterAll } from "vitest";
import { numRuns, seed } from "./fc.js";
import { removeTempDirs } from "./temp.js";

// Printed once per test file so any failure can be replayed with the same seed.
console.log(`fast-check: NRI_WIRE_SEED=${seed} NRI_WIRE_NUM_RUNS=${numRuns}`);

// Registered first, so it runs after the file's own afterAll hooks (they run in reverse order).
afterAll(removeTempDirs);
