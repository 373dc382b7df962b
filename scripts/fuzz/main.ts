/**
 * `npm run fuzz`: every decoder a peer reaches, fed mutated valid inputs and random bytes.
 * NRI_WIRE_FUZZ_INPUTS sets the inputs per target (default 10000), NRI_WIRE_SEED the seed
 * (printed; random by default), NRI_WIRE_FUZZ_TARGETS a comma-separated filter on target names,
 * NRI_WIRE_FUZZ_FROM the first input index (with INPUTS=1, replays one input). Exits 1 on any
 * finding.
 */
import { buildCorpus } from "./corpus.js";
import { type TargetReport, runTarget } from "./run.js";
import { fuzzTargets } from "./targets.js";

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`fuzz: ${name}=${raw} is not an integer >= 0`);
  return n;
}

const seed = envInt("NRI_WIRE_SEED", (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0);
const inputs = envInt("NRI_WIRE_FUZZ_INPUTS", 10_000);
const from = envInt("NRI_WIRE_FUZZ_FROM", 0);
const filter = (process.env.NRI_WIRE_FUZZ_TARGETS ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");

const fmt = (n: number, digits = 0): string => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (n: number): string => `${fmt(n / (1 << 20), 1)} MiB`;

console.log(`fuzz: NRI_WIRE_SEED=${seed} NRI_WIRE_FUZZ_INPUTS=${inputs}${from > 0 ? ` NRI_WIRE_FUZZ_FROM=${from}` : ""}`);
const corpus = buildCorpus(seed);
const targets = fuzzTargets(corpus).filter((t) => filter.length === 0 || filter.some((f) => t.name.includes(f)));
const reports: TargetReport[] = [];
for (const t of targets) {
  let last = performance.now();
  const r = runTarget(t, seed, inputs, from, (done) => {
    if (performance.now() - last > 10_000) {
      last = performance.now();
      console.error(`  ${t.name}: ${fmt(done)} of ${fmt(inputs)}`);
    }
  });
  reports.push(r);
  const tallies = Object.entries(r.tallies).map(([k, v]) => `${k}: ${fmt(v)}`).join(", ");
  console.log(
    `${r.name}: ${fmt(r.inputs)} inputs in ${fmt(r.seconds, 1)} s (${fmt(r.inputsPerSecond)}/s), ${fmt(r.ok)} ok, ${fmt(r.errors)} documented errors, ${r.findings} findings; slowest input ${fmt(r.maxMs, 2)} ms (#${r.maxMsIndex}), re-timed best of 5: ${fmt(r.retimedMaxMs, 2)} ms (#${r.retimedMaxIndex}); peak RSS ${mib(r.peakRss)}, heap ${mib(r.peakHeapUsed)}, array buffers ${mib(r.peakArrayBuffers)}${tallies === "" ? "" : `; ${tallies}`}`,
  );
  for (const f of r.firstFindings) console.log(`  FINDING #${f.index}: ${f.message}  (replay: NRI_WIRE_SEED=${seed} NRI_WIRE_FUZZ_TARGETS="${f.target}" NRI_WIRE_FUZZ_FROM=${f.index} NRI_WIRE_FUZZ_INPUTS=1)`);
}
console.log("\n| target | inputs | inputs/s | ok | documented errors | findings | slowest input (re-timed) | after an error |");
console.log("|---|---|---|---|---|---|---|---|");
for (const r of reports) {
  console.log(`| ${r.name} | ${fmt(r.inputs)} | ${fmt(r.inputsPerSecond)} | ${fmt(r.ok)} | ${fmt(r.errors)} | ${r.findings} | ${fmt(r.maxMs, 2)} ms (${fmt(r.retimedMaxMs, 2)} ms) | ${r.afterError.split(":")[0]} |`);
}
const total = reports.reduce((n, r) => n + r.findings, 0);
console.log(`\nfuzz: ${total} findings, seed ${seed}`);
process.exitCode = total === 0 ? 0 : 1;
