/**
 * `npm run soak`: runs the soak and prints its figures; exits 1 when a check failed.
 *
 * Environment: NRI_WIRE_SOAK_SECONDS (default 20), NRI_WIRE_SEED (default random, printed),
 * NRI_WIRE_SOAK_CSV (default soak.csv in the run's temporary directory),
 * NRI_WIRE_SOAK_INTERVAL (seconds between CSV lines, default 5), NRI_WIRE_SOAK_PODS (pods in
 * flight, default 4), NRI_WIRE_SOAK_KILL_MS (mean ms between kills, default 3000),
 * NRI_WIRE_SOAK_JITTER_MS (the longest a plugin handler waits, default 2), NRI_WIRE_SOAK_GO=0
 * to leave out the Go stub plugin (built when Go is on PATH).
 */
import { goAvailable, goBuild } from "../../test/interop/support.js";
import { runSoak, soakOptions } from "./soak.js";
import { summary } from "./summary.js";

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`soak: ${name}=${raw} is not a non-negative integer`);
  return n;
}

const rawSeed = process.env.NRI_WIRE_SEED;
const seed = rawSeed ? Number(rawSeed) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isSafeInteger(seed)) throw new Error(`soak: NRI_WIRE_SEED=${rawSeed} is not an integer`);
const goPeer = process.env.NRI_WIRE_SOAK_GO !== "0" && goAvailable() ? goBuild("nri-peer", "nri-peer-soak-cli") : undefined;
const csvPath = process.env.NRI_WIRE_SOAK_CSV;
const result = await runSoak(
  soakOptions({
    seconds: intEnv("NRI_WIRE_SOAK_SECONDS", 20),
    seed,
    ...(csvPath ? { csvPath } : {}),
    sampleEverySeconds: intEnv("NRI_WIRE_SOAK_INTERVAL", 5),
    pods: intEnv("NRI_WIRE_SOAK_PODS", 4),
    meanKillMs: intEnv("NRI_WIRE_SOAK_KILL_MS", 3000),
    jitterMs: intEnv("NRI_WIRE_SOAK_JITTER_MS", 2),
    goPeer,
  }),
);
for (const line of summary(result)) console.log(`soak: ${line}`);
if (result.failures.length > 0) {
  for (const f of result.failures) console.error(f);
  console.error(`soak: FAILED (replay with NRI_WIRE_SEED=${result.seed})`);
  process.exit(1);
}
console.log("soak: passed");
