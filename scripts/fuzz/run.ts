import { type KeptInput, OutcomePool, outcomeKey } from "./pool.js";
import { Rng, inputSeed } from "./rng.js";
import { Finding, type FuzzTarget, type Input, type Probe } from "./target.js";

/** One broken rule, with the input that broke it. */
export interface FindingReport {
  readonly target: string;
  readonly index: number;
  readonly message: string;
  readonly input: Input;
}

/** The figures of one target's run. */
export interface TargetReport {
  readonly name: string;
  readonly errorClass: string;
  readonly afterError: string;
  /** The first input's index, and how many were run (fewer than asked when `until` or a finding stopped the run). */
  readonly from: number;
  readonly inputs: number;
  readonly ok: number;
  readonly errors: number;
  readonly findings: number;
  readonly firstFindings: readonly FindingReport[];
  readonly seconds: number;
  /** CPU time of the process meanwhile (user and system): on a busy machine, what the inputs cost. */
  readonly cpuSeconds: number;
  readonly inputsPerSecond: number;
  /** Longest time one input spent decoding, and which input it was. */
  readonly maxMs: number;
  readonly maxMsIndex: number;
  /**
   * The slowest inputs decoded again, best of 5 each, and the worst of those: what an input
   * costs itself, without the pauses (GC, a busy machine) that land on whichever input is running.
   */
  readonly retimedMaxMs: number;
  readonly retimedMaxIndex: number;
  /** Highest process memory seen while the target ran, in bytes. */
  readonly peakRss: number;
  readonly peakHeapUsed: number;
  readonly peakArrayBuffers: number;
  readonly tallies: Readonly<Record<string, number>>;
}

/** How to run a target. */
export interface RunOptions {
  readonly seed: number;
  /** The first input's index. */
  readonly from?: number;
  readonly count: number;
  /** A performance.now() time: the run stops at the next multiple of 1024 inputs after it. */
  readonly until?: number;
  /** Outcomes and kept inputs: drawn from and added to as the run goes. */
  readonly pool?: OutcomePool;
  /** Stop at the first finding (a campaign does, to save it). */
  readonly stopAtFinding?: boolean;
  readonly progress?: (done: number) => void;
}

/** A probe whose time() adds to `elapsed`. */
class TimingProbe implements Probe {
  elapsed = 0;
  tallied: string[] = [];
  constructor(private readonly tallies: Record<string, number>) {}
  // Arrow functions, so a check may pass them on alone.
  readonly time = <T>(f: () => T): T => {
    const t0 = performance.now();
    try {
      return f();
    } finally {
      this.elapsed += performance.now() - t0;
    }
  };
  readonly tally = (key: string): void => {
    this.tallies[key] = (this.tallies[key] ?? 0) + 1;
    this.tallied.push(key);
  };
}

/** Runs `input` once; the Finding (or other exception) it throws, or undefined. */
export function checkOnce(target: FuzzTarget, input: Input, probe: Probe = new TimingProbe({})): { message: string } | undefined {
  try {
    target.check(input, probe);
    return undefined;
  } catch (e) {
    return { message: e instanceof Finding ? e.message : `harness threw ${e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e)}` };
  }
}

/** Runs inputs `from` to `from + count - 1` of `target` for `seed` (fewer if `until` passes). */
export function runTarget(target: FuzzTarget, options: RunOptions): TargetReport {
  const { seed, count, until, stopAtFinding = false, progress } = options;
  const from = options.from ?? 0;
  const pool = options.pool ?? new OutcomePool();
  const tallies: Record<string, number> = {};
  const probe = new TimingProbe(tallies);
  let ok = 0;
  let errors = 0;
  let findings = 0;
  const first: FindingReport[] = [];
  let maxMs = 0;
  let maxMsIndex = from;
  const slowest: { index: number; ms: number; input: Input }[] = [];
  let peakRss = 0;
  let peakHeapUsed = 0;
  let peakArrayBuffers = 0;
  const sample = (): void => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeapUsed = Math.max(peakHeapUsed, m.heapUsed);
    peakArrayBuffers = Math.max(peakArrayBuffers, m.arrayBuffers);
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let i = from;
  for (; i < from + count; i++) {
    if ((i & 1023) === 0 && i > from) {
      if (until !== undefined && performance.now() >= until) break;
      if ((i & 4095) === 0) {
        sample();
        progress?.(i - from);
      }
    }
    probe.elapsed = 0;
    probe.tallied.length = 0;
    const input = target.draw(new Rng(inputSeed(seed, target.name, i)), pool.inputs);
    try {
      const outcome = target.check(input, probe);
      if (outcome === "ok") ok++;
      else errors++;
      pool.note(outcomeKey(outcome, probe.tallied), input);
    } catch (e) {
      findings++;
      const message = e instanceof Finding ? e.message : `harness threw ${e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e)}`;
      if (first.length < 5) first.push({ target: target.name, index: i, message, input });
      if (stopAtFinding) {
        i++;
        break;
      }
    }
    const ms = probe.elapsed;
    if (ms > maxMs) {
      maxMs = ms;
      maxMsIndex = i;
    }
    if (slowest.length < 8 || ms > slowest[slowest.length - 1]!.ms) {
      slowest.push({ index: i, ms, input });
      slowest.sort((a, b) => b.ms - a.ms);
      if (slowest.length > 8) slowest.pop();
    }
  }
  sample();
  const done = i - from;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  let retimedMaxMs = 0;
  let retimedMaxIndex = from;
  const quiet = new TimingProbe({});
  for (const { index, input } of slowest) {
    let best = Infinity;
    for (let k = 0; k < 5; k++) {
      quiet.elapsed = 0;
      checkOnce(target, input, quiet);
      best = Math.min(best, quiet.elapsed);
    }
    if (best > retimedMaxMs) {
      retimedMaxMs = best;
      retimedMaxIndex = index;
    }
  }
  return {
    name: target.name,
    errorClass: target.errorClass,
    afterError: target.afterError,
    from,
    inputs: done,
    ok,
    errors,
    findings,
    firstFindings: first,
    seconds,
    cpuSeconds,
    inputsPerSecond: done / seconds,
    maxMs,
    maxMsIndex,
    retimedMaxMs,
    retimedMaxIndex,
    peakRss,
    peakHeapUsed,
    peakArrayBuffers,
    tallies,
  };
}

export type { KeptInput };
