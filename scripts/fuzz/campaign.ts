import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type Corpus, generatedSeeds, joinSeeds, recordedSeeds, seedsFromJson, seedsToJson } from "./corpus.js";
import { inputFromJson, inputToJson } from "./input-json.js";
import { type KeptInput, OutcomePool } from "./pool.js";
import { loadReproducer, replayCommand, saveReproducer, slug, targetNamed, writeAtomic } from "./reproducer.js";
import { type TargetReport, checkOnce, runTarget } from "./run.js";
import type { FuzzTarget } from "./target.js";

/**
 * A fuzz campaign kept in a directory, so that it can be stopped at any time and resumed, on this
 * machine or a fresh clone: input i of a target is drawn from the seed, the target's name and i
 * alone (plus the corpus and kept inputs, also saved), so a campaign that goes on from `next`
 * runs exactly the inputs it had not run yet.
 *
 *   state.json          seed, goal, and per target: the next input, counts, outcomes, timings, runs
 *   corpus.json         the generated seeds (the recorded ones are test/fixtures/vectors)
 *   kept/<target>.json  every outcome seen with its count, and the smallest input of each (up to
 *                       150), mutated again and replayed
 *   findings/*.json     one reproducer per finding: the input and the command that replays it
 */

/** One process's share of a target's inputs. */
export interface RunRecord {
  readonly from: number;
  to: number;
  seconds: number;
  cpuSeconds: number;
  readonly started: string;
  readonly node: string;
  readonly commit: string;
  /** Git tree hashes of src/ and gen/ at that commit: what was fuzzed, still findable after a rebase. */
  readonly src: string;
  readonly gen: string;
}

/** A target's progress and figures over the whole campaign. */
export interface TargetState {
  /** Inputs 0 to next - 1 have been run. */
  next: number;
  ok: number;
  errors: number;
  findings: number;
  /** Wall time spent running this target's inputs, and the process's CPU time meanwhile. */
  seconds: number;
  cpuSeconds: number;
  maxMs: number;
  maxMsIndex: number;
  retimedMaxMs: number;
  retimedMaxIndex: number;
  peakRss: number;
  peakArrayBuffers: number;
  tallies: Record<string, number>;
  /** Distinct outcomes seen (counted per outcome in the kept file). */
  outcomes: number;
  runs: RunRecord[];
}

/** The whole campaign's state file. */
export interface CampaignState {
  readonly format: 1;
  readonly seed: number;
  goal: number;
  readonly targets: Record<string, TargetState>;
}

/** Options of a campaign run. */
export interface CampaignOptions {
  readonly dir: string;
  /** Seed and goal of a new campaign (an existing one keeps its seed; a goal given raises or lowers it). */
  readonly seed: number;
  readonly goal?: number;
  /** Target name filter (substrings). */
  readonly filter: readonly string[];
  /** Seconds between checkpoints. */
  readonly sliceSeconds: number;
  /** Stop (after a checkpoint) once this many seconds have passed. */
  readonly stopAfterSeconds: number;
  readonly log: (line: string) => void;
  /** Makes the targets over a corpus. */
  readonly targets: (corpus: Corpus) => FuzzTarget[];
}

/** A target that has run no input yet. */
export const newTargetState = (): TargetState => ({
  next: 0,
  ok: 0,
  errors: 0,
  findings: 0,
  seconds: 0,
  cpuSeconds: 0,
  maxMs: 0,
  maxMsIndex: 0,
  retimedMaxMs: 0,
  retimedMaxIndex: 0,
  peakRss: 0,
  peakArrayBuffers: 0,
  tallies: {},
  outcomes: 0,
  runs: [],
});

/** The tree hash of `path` at HEAD, or "unknown" outside a git checkout. */
function treeOf(path: string): string {
  try {
    return execFileSync("git", ["rev-parse", "--short=12", `HEAD:${path}`], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

/** The commit the harness runs at, `-dirty` when the code under test or the harness has changes. */
export function commitOf(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "gen", "scripts/fuzz/*.ts", "scripts/fuzz/targets", "test/arbitraries"], { encoding: "utf8" }).trim();
    return dirty === "" ? head : `${head}-dirty`;
  } catch {
    return "unknown";
  }
}

const fmt = (n: number, digits = 0): string => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The state of the campaign in `dir`. */
export function readState(dir: string): CampaignState {
  const file = join(dir, "state.json");
  if (!existsSync(file)) throw new Error(`fuzz: no campaign in ${dir} (no state.json); start one with npm run fuzz -- --resume`);
  const state = JSON.parse(readFileSync(file, "utf8")) as CampaignState;
  if (state.format !== 1) throw new Error(`fuzz: ${file} has format ${String(state.format)}, this harness reads format 1`);
  return state;
}

/** Reads the campaign in `dir`, or starts one. */
export function openCampaign(dir: string, seed: number, goal: number | undefined): { state: CampaignState; corpus: Corpus; fresh: boolean } {
  const stateFile = join(dir, "state.json");
  const corpusFile = join(dir, "corpus.json");
  const recorded = recordedSeeds();
  if (!existsSync(stateFile)) {
    const generated = generatedSeeds(seed, recorded);
    writeAtomic(corpusFile, `${JSON.stringify(seedsToJson(generated))}\n`);
    const state: CampaignState = { format: 1, seed, goal: goal ?? 100_000_000, targets: {} };
    writeAtomic(stateFile, `${JSON.stringify(state, null, 2)}\n`);
    return { state, corpus: joinSeeds([recorded, generated]), fresh: true };
  }
  const state = readState(dir);
  if (goal !== undefined) state.goal = goal;
  const generated = seedsFromJson(JSON.parse(readFileSync(corpusFile, "utf8")), corpusFile);
  return { state, corpus: joinSeeds([recorded, generated]), fresh: false };
}

/** A target's kept file: outcome counts and kept inputs. */
interface KeptFile {
  readonly outcomes: Readonly<Record<string, number>>;
  readonly kept: readonly KeptInput[];
}

/** The outcome counts and kept inputs of a target, as saved. */
export function loadKept(dir: string, target: string): KeptFile {
  const file = join(dir, "kept", `${slug(target)}.json`);
  if (!existsSync(file)) return { outcomes: {}, kept: [] };
  const j = JSON.parse(readFileSync(file, "utf8")) as { outcomes: Record<string, number>; kept: { outcome: string; input: unknown }[] };
  return { outcomes: j.outcomes, kept: j.kept.map((e, i) => ({ outcome: e.outcome, input: inputFromJson(e.input, `${file}: kept[${i}]`) })) };
}

/** The reproducer files of a campaign. */
export function findingFiles(dir: string): string[] {
  const d = join(dir, "findings");
  return existsSync(d) ? readdirSync(d).filter((f) => f.endsWith(".json")).sort().map((f) => join(d, f)) : [];
}

/**
 * The target to run next: one not run yet (to measure it), else the one with the least time left
 * to its goal at its own pace (CPU time, which a busy machine does not change). Targets thus reach
 * the goal one after the other, fastest first, and a campaign cut short has as many as possible.
 */
export function nextTarget(open: readonly FuzzTarget[], state: CampaignState): FuzzTarget {
  const left = (t: FuzzTarget): number => {
    const s = state.targets[t.name]!;
    return s.next === 0 || s.cpuSeconds === 0 ? -1 : ((state.goal - s.next) * s.cpuSeconds) / s.next;
  };
  return open.reduce((a, b) => (left(b) < left(a) ? b : a));
}

/** Adds a run's figures to a target's state. */
function merge(t: TargetState, r: TargetReport, pool: OutcomePool, run: RunRecord): void {
  t.next = r.from + r.inputs;
  t.ok += r.ok;
  t.errors += r.errors;
  t.findings += r.findings;
  t.seconds += r.seconds;
  t.cpuSeconds += r.cpuSeconds;
  if (r.maxMs > t.maxMs) {
    t.maxMs = r.maxMs;
    t.maxMsIndex = r.maxMsIndex;
  }
  if (r.retimedMaxMs > t.retimedMaxMs) {
    t.retimedMaxMs = r.retimedMaxMs;
    t.retimedMaxIndex = r.retimedMaxIndex;
  }
  t.peakRss = Math.max(t.peakRss, r.peakRss);
  t.peakArrayBuffers = Math.max(t.peakArrayBuffers, r.peakArrayBuffers);
  for (const [k, n] of Object.entries(r.tallies)) t.tallies[k] = (t.tallies[k] ?? 0) + n;
  t.outcomes = pool.counts.size;
  run.to = t.next;
  run.seconds += r.seconds;
  run.cpuSeconds += r.cpuSeconds;
}

/**
 * Runs the campaign: first every saved finding and kept input again (a finding that still fails
 * stops it), then slices of the target nearest its goal (see nextTarget), until each has `goal` inputs,
 * `stopAfterSeconds` pass, `shouldStop()` says so, or a finding. State is saved after every slice.
 * Resolves to the number of findings (0, or 1 for the finding that stopped it).
 */
export async function runCampaign(options: CampaignOptions, shouldStop: () => boolean): Promise<number> {
  const { dir, log } = options;
  const { state, corpus, fresh } = openCampaign(dir, options.seed, options.goal);
  const targets = options.targets(corpus).filter((t) => options.filter.length === 0 || options.filter.some((f) => t.name.includes(f)));
  const commit = commitOf();
  const [srcTree, genTree] = [treeOf("src"), treeOf("gen")];
  log(`fuzz campaign in ${dir}: ${fresh ? "new" : "resumed"}, seed ${state.seed}, goal ${fmt(state.goal)} inputs per target, commit ${commit}, Node ${process.version}`);

  for (const file of findingFiles(dir)) {
    const r = loadReproducer(file);
    const f = checkOnce(targetNamed(targets, r.target, file), r.input);
    if (f !== undefined) {
      log(`\nFINDING still fails: ${r.target}: ${f.message}\n  replay: ${replayCommand(file)}\n  fix it (and add a test) before the campaign goes on.`);
      return 1;
    }
  }
  const pools = new Map<string, OutcomePool>();
  for (const t of targets) {
    const pool = new OutcomePool();
    const { outcomes, kept } = loadKept(dir, t.name);
    for (const [i, k] of kept.entries()) {
      const f = checkOnce(t, k.input);
      if (f !== undefined) {
        const file = saveReproducer(join(dir, "findings"), { target: t.name, index: -1 - i, message: f.message, input: k.input }, { seed: state.seed, commit, node: process.version });
        log(`\nFINDING in a kept input of ${t.name}: ${f.message}\n  saved: ${file}\n  replay: ${replayCommand(file)}`);
        return 1;
      }
    }
    pool.restore(outcomes, kept);
    pools.set(t.name, pool);
    state.targets[t.name] ??= newTargetState();
  }

  /** Writes the state, and the kept file of `target` (of every target when none is given). */
  const save = (target?: FuzzTarget): void => {
    for (const t of target === undefined ? targets : [target]) {
      const pool = pools.get(t.name)!;
      const file: object = { outcomes: Object.fromEntries(pool.counts), kept: pool.entries.map((k) => ({ outcome: k.outcome, input: inputToJson(k.input) })) };
      writeAtomic(join(dir, "kept", `${slug(t.name)}.json`), `${JSON.stringify(file, null, 1)}\n`);
    }
    writeAtomic(join(dir, "state.json"), `${JSON.stringify(state, null, 2)}\n`);
  };
  const runs = new Map<string, RunRecord>();
  const started = performance.now();
  for (;;) {
    const open = targets.filter((t) => state.targets[t.name]!.next < state.goal);
    if (open.length === 0) {
      log("fuzz campaign: every target has reached the goal");
      break;
    }
    if (shouldStop() || performance.now() - started > options.stopAfterSeconds * 1000) {
      log("fuzz campaign: stopped; resume with npm run fuzz -- --resume");
      break;
    }
    const target = nextTarget(open, state);
    const t = state.targets[target.name]!;
    let run = runs.get(target.name);
    if (run === undefined) {
      run = { from: t.next, to: t.next, seconds: 0, cpuSeconds: 0, started: new Date().toISOString(), node: process.version, commit, src: srcTree, gen: genTree };
      runs.set(target.name, run);
      t.runs.push(run);
    }
    const pool = pools.get(target.name)!;
    const r = runTarget(target, { seed: state.seed, from: t.next, count: state.goal - t.next, until: performance.now() + options.sliceSeconds * 1000, pool, stopAtFinding: true });
    merge(t, r, pool, run);
    log(
      `${target.name}: ${fmt(t.next)} of ${fmt(state.goal)} (${fmt((100 * t.next) / state.goal, 1)} %), ${fmt(r.inputsPerSecond)}/s (${fmt(r.inputs / r.cpuSeconds)} per CPU second), ${fmt(t.seconds / 3600, 2)} h, ${pool.counts.size} outcomes, ${t.findings} findings`,
    );
    const f = r.firstFindings[0];
    if (f !== undefined) {
      const file = saveReproducer(join(dir, "findings"), f, { seed: state.seed, commit, node: process.version });
      save(target);
      log(`\nFINDING in ${f.target}, input ${f.index}: ${f.message}\n  saved: ${file}\n  replay: ${replayCommand(file)}\n  minimize: ${replayCommand(file).replace("--replay", "--minimize")}`);
      return 1;
    }
    save(target);
    // Lets a signal's handler run between slices.
    await new Promise((resolve) => setImmediate(resolve));
  }
  save();
  return 0;
}

/** The campaign as a Markdown table, one row per target, and the runs it was made of. */
export function campaignReport(state: CampaignState): string {
  const hours = (s: number): string => (s < 3600 ? `${fmt(s / 60, 1)} min` : `${fmt(s / 3600, 2)} h`);
  const lines = [
    `seed ${state.seed}, goal ${fmt(state.goal)} inputs per target`,
    "",
    "| target | inputs | correct results | documented errors | outcomes | findings | wall time | CPU time | inputs per CPU second | slowest input, wall (re-timed) | peak RSS |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const [name, t] of Object.entries(state.targets)) {
    lines.push(
      `| ${name} | ${fmt(t.next)} | ${fmt(t.ok)} | ${fmt(t.errors)} | ${fmt(t.outcomes)} | ${t.findings} | ${hours(t.seconds)} | ${hours(t.cpuSeconds)} | ${fmt(t.next / t.cpuSeconds)} | ${fmt(t.maxMs, 1)} ms (${fmt(t.retimedMaxMs, 2)} ms) | ${fmt(t.peakRss / (1 << 20))} MiB |`,
    );
  }
  const runs = new Map<string, { inputs: number; first: string; last: string }>();
  for (const t of Object.values(state.targets)) {
    for (const r of t.runs) {
      const key = `Node ${r.node}, commit ${r.commit} (src tree ${r.src}, gen tree ${r.gen})`;
      const e = runs.get(key) ?? { inputs: 0, first: r.started, last: r.started };
      runs.set(key, { inputs: e.inputs + r.to - r.from, first: e.first < r.started ? e.first : r.started, last: e.last > r.started ? e.last : r.started });
    }
  }
  lines.push("");
  for (const [key, r] of runs) lines.push(`${key}: ${fmt(r.inputs)} inputs, runs started ${r.first.slice(0, 16).replace("T", " ")} to ${r.last.slice(0, 16).replace("T", " ")} UTC`);
  return lines.join("\n");
}
