import fc from "fast-check";

/**
 * fast-check settings for every property test. `NRI_WIRE_SEED` replays a run and
 * `NRI_WIRE_NUM_RUNS` sets the depth (default 100; CI uses the default).
 */
function readInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`test: ${name}=${raw} is not an integer`);
  return n;
}

export const seed: number = readInt("NRI_WIRE_SEED") ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
export const numRuns: number = readInt("NRI_WIRE_NUM_RUNS") ?? 100;

fc.configureGlobal({ seed, numRuns });

/** numRuns scaled for expensive properties, never below 1. */
export function runs(scale: number): number {
  return Math.max(1, Math.round(numRuns * scale));
}
