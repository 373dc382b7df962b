/**
 * `npm run fuzz`: every decoder a peer reaches, fed mutated valid inputs and random bytes.
 *
 *   npm run fuzz                       a run of 10,000 inputs per target (exits 1 on any finding,
 *                                      saved like a campaign's in scripts/fuzz/campaign/findings)
 *   npm run fuzz -- --resume           the recorded campaign (scripts/fuzz/campaign) goes on
 *   npm run fuzz -- --replay FILE...   runs saved findings again (exits 1 while one still fails)
 *   npm run fuzz -- --minimize FILE    shrinks a saved finding's input, in place
 *   npm run fuzz -- --report           the recorded campaign as a table
 *
 * Options: --inputs N (NRI_WIRE_FUZZ_INPUTS), --seed N (NRI_WIRE_SEED; printed, random by default),
 * --targets a,b (NRI_WIRE_FUZZ_TARGETS: substrings of target names), --from N (NRI_WIRE_FUZZ_FROM:
 * the first input index). With --resume: --dir D, --goal N (inputs per target), --hours H (stop
 * after a checkpoint once H hours have passed), --checkpoint S (seconds between checkpoints);
 * SIGINT or SIGTERM stops it at the next checkpoint.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { campaignReport, commitOf, findingFiles, readState, runCampaign } from "./campaign.js";
import { buildCorpus } from "./corpus.js";
import { minimize } from "./minimize.js";
import { loadReproducer, replayCommand, saveMinimized, saveReproducer, targetNamed } from "./reproducer.js";
import { type TargetReport, checkOnce, runTarget } from "./run.js";
import { fuzzTargets } from "./targets.js";

const CAMPAIGN_DIR = "scripts/fuzz/campaign";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    resume: { type: "boolean", default: false },
    replay: { type: "boolean", default: false },
    report: { type: "boolean", default: false },
    minimize: { type: "string" },
    dir: { type: "string", default: CAMPAIGN_DIR },
    inputs: { type: "string" },
    seed: { type: "string" },
    targets: { type: "string" },
    from: { type: "string" },
    goal: { type: "string" },
    hours: { type: "string" },
    checkpoint: { type: "string", default: "60" },
  },
});

function int(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`fuzz: ${name}=${raw} is not an integer >= 0`);
  return n;
}
const number = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!(n > 0)) throw new Error(`fuzz: --${name} ${raw} is not a positive number`);
  return n;
};

// Decoders make an Error for most bad inputs; capturing its stack costs more than the decoding
// and serves no one here (a finding carries its input). Replays and minimizing keep stacks.
if (!values.replay && values.minimize === undefined) Error.stackTraceLimit = 0;

const env = process.env;
const seedText = values.seed ?? env.NRI_WIRE_SEED;
const seed = int("seed", seedText, (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0);
const filter = (values.targets ?? env.NRI_WIRE_FUZZ_TARGETS ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
const fmt = (n: number, digits = 0): string => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (n: number): string => `${fmt(n / (1 << 20), 1)} MiB`;

/** The targets over a corpus that only findings and kept inputs need (they carry their inputs). */
const anyTargets = () => fuzzTargets(buildCorpus(0, 1));

/** Runs the mode the options ask for; sets the exit code. */
async function run(): Promise<void> {
  if (values.report) {
    console.log(campaignReport(readState(resolve(values.dir))));
  } else if (values.replay) {
    const files = positionals.length > 0 ? positionals : findingFiles(values.dir);
    const targets = anyTargets();
    let failing = 0;
    for (const file of files) {
      const r = loadReproducer(file);
      const f = checkOnce(targetNamed(targets, r.target, file), r.input);
      if (f === undefined) console.log(`${file}: ${r.target}: no finding (found as: ${r.message})`);
      else {
        failing++;
        console.log(`${file}: ${r.target}: FINDING: ${f.message}`);
      }
    }
    console.log(`fuzz: ${files.length} reproducers, ${failing} still failing`);
    process.exitCode = failing === 0 ? 0 : 1;
  } else if (values.minimize !== undefined) {
    const file = values.minimize;
    const r = loadReproducer(file);
    const target = targetNamed(anyTargets(), r.target, file);
    const f = checkOnce(target, r.input);
    if (f === undefined) throw new Error(`fuzz: ${file} does not fail (any more): nothing to minimize`);
    const { input, tries } = minimize(target, r.input, f.message);
    saveMinimized(file, r, input);
    const after = checkOnce(target, input);
    console.log(`fuzz: ${file} minimized in ${fmt(tries)} tries: ${after?.message}`);
    for (const [k, v] of Object.entries(input)) {
      const shown = v instanceof Uint8Array ? Buffer.from(v).toString("hex") : Array.isArray(v) ? v.map((c) => Buffer.from(c as Uint8Array).toString("hex")).join(" | ") : String(v);
      console.log(`  ${k}: ${shown}`);
    }
    console.log(`  replay: ${replayCommand(file)}`);
  } else if (values.resume) {
    let stop = false;
    const onSignal = (): void => {
      stop = true;
      console.log("fuzz campaign: stopping at the next checkpoint");
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    const found = await runCampaign(
      {
        dir: resolve(values.dir),
        seed: int("seed", seedText, 20260611),
        ...(values.goal === undefined ? {} : { goal: int("goal", values.goal, 0) }),
        filter,
        sliceSeconds: number("checkpoint", values.checkpoint, 60),
        stopAfterSeconds: number("hours", values.hours, Infinity) * 3600,
        log: (line) => console.log(line),
        targets: fuzzTargets,
      },
      () => stop,
    );
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.exitCode = found === 0 ? 0 : 1;
  } else {
    const inputs = int("inputs", values.inputs ?? env.NRI_WIRE_FUZZ_INPUTS, 10_000);
    const from = int("from", values.from ?? env.NRI_WIRE_FUZZ_FROM, 0);
    console.log(`fuzz: NRI_WIRE_SEED=${seed} NRI_WIRE_FUZZ_INPUTS=${inputs}${from > 0 ? ` NRI_WIRE_FUZZ_FROM=${from}` : ""}`);
    const targets = fuzzTargets(buildCorpus(seed)).filter((t) => filter.length === 0 || filter.some((f) => t.name.includes(f)));
    const reports: TargetReport[] = [];
    for (const t of targets) {
      let last = performance.now();
      const r = runTarget(t, {
        seed,
        from,
        count: inputs,
        progress: (done) => {
          if (performance.now() - last > 10_000) {
            last = performance.now();
            console.error(`  ${t.name}: ${fmt(done)} of ${fmt(inputs)}`);
          }
        },
      });
      reports.push(r);
      const tallies = Object.entries(r.tallies).map(([k, v]) => `${k}: ${fmt(v)}`).join(", ");
      console.log(
        `${r.name}: ${fmt(r.inputs)} inputs in ${fmt(r.seconds, 1)} s (${fmt(r.inputsPerSecond)}/s), ${fmt(r.ok)} ok, ${fmt(r.errors)} documented errors, ${r.findings} findings; slowest input ${fmt(r.maxMs, 2)} ms (#${r.maxMsIndex}), re-timed best of 5: ${fmt(r.retimedMaxMs, 2)} ms (#${r.retimedMaxIndex}); peak RSS ${mib(r.peakRss)}, heap ${mib(r.peakHeapUsed)}, array buffers ${mib(r.peakArrayBuffers)}${tallies === "" ? "" : `; ${tallies}`}`,
      );
      for (const f of r.firstFindings) {
        // Saved with its input: kept inputs steer the draws, so an index alone does not replay it.
        const file = saveReproducer(resolve(values.dir, "findings"), f, { seed, commit: commitOf(), node: process.version });
        console.log(`  FINDING #${f.index}: ${f.message}\n    saved: ${file}\n    replay: ${replayCommand(file)}`);
      }
    }
    console.log("\n| target | inputs | inputs/s | ok | documented errors | findings | slowest input (re-timed) | after an error |");
    console.log("|---|---|---|---|---|---|---|---|");
    for (const r of reports) {
      console.log(`| ${r.name} | ${fmt(r.inputs)} | ${fmt(r.inputsPerSecond)} | ${fmt(r.ok)} | ${fmt(r.errors)} | ${r.findings} | ${fmt(r.maxMs, 2)} ms (${fmt(r.retimedMaxMs, 2)} ms) | ${r.afterError.split(":")[0]} |`);
    }
    const total = reports.reduce((n, r) => n + r.findings, 0);
    console.log(`\nfuzz: ${total} findings, seed ${seed}`);
    process.exitCode = total === 0 ? 0 : 1;
  }
}

try {
  await run();
} catch (e) {
  // The harness's own errors (a bad option, a missing campaign) are messages, not crashes.
  if (!(e instanceof Error) || !e.message.startsWith("fuzz: ")) throw e;
  console.error(e.message);
  process.exitCode = 2;
}
