import { Finding, type FuzzTarget, type Stopwatch } from "./targets.js";
import { Rng, inputSeed } from "./rng.js";

/** One broken rule, with what is needed to replay it alone. */
export interface FindingReport {
  readonly target: string;
  readonly index: number;
  readonly message: string;
}

/** The figures of one target's run. */
export interface TargetReport {
  readonly name: string;
  readonly errorClass: string;
  readonly afterError: string;
  readonly inputs: number;
  readonly ok: number;
  readonly errors: number;
  readonly findings: number;
  readonly firstFindings: readonly FindingReport[];
  readonly seconds: number;
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

/** Runs inputs `from` to `from + count - 1` of `target` for `seed`. */
export function runTarget(target: FuzzTarget, seed: number, count: number, from = 0, progress?: (done: number) => void): TargetReport {
  let inputTime = 0;
  const watch: Stopwatch = {
    time<T>(f: () => T): T {
      const t0 = performance.now();
      try {
        return f();
      } finally {
        inputTime += performance.now() - t0;
      }
    },
  };
  const tallies: Record<string, number> = {};
  const tally = (key: string): void => {
    tallies[key] = (tallies[key] ?? 0) + 1;
  };
  let ok = 0;
  let errors = 0;
  let findings = 0;
  const first: FindingReport[] = [];
  let maxMs = 0;
  let maxMsIndex = from;
  const slowest: { index: number; ms: number }[] = [];
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
  for (let i = from; i < from + count; i++) {
    inputTime = 0;
    try {
      if (target.one(new Rng(inputSeed(seed, target.name, i)), watch, tally) === "ok") ok++;
      else errors++;
    } catch (e) {
      findings++;
      const message = e instanceof Finding ? e.message : `harness threw ${e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e)}`;
      if (first.length < 5) first.push({ target: target.name, index: i, message });
    }
    if (inputTime > maxMs) {
      maxMs = inputTime;
      maxMsIndex = i;
    }
    if (slowest.length < 8 || inputTime > slowest[slowest.length - 1]!.ms) {
      slowest.push({ index: i, ms: inputTime });
      slowest.sort((a, b) => b.ms - a.ms);
      if (slowest.length > 8) slowest.pop();
    }
    if ((i & 4095) === 0) {
      sample();
      if (progress !== undefined && i > from) progress(i - from);
    }
  }
  sample();
  const seconds = (performance.now() - t0) / 1000;
  let retimedMaxMs = 0;
  let retimedMaxIndex = from;
  for (const { index } of slowest) {
    let best = Infinity;
    for (let k = 0; k < 5; k++) {
      inputTime = 0;
      try {
        target.one(new Rng(inputSeed(seed, target.name, index)), watch, () => undefined);
      } catch {
        // Counted in the run already.
      }
      best = Math.min(best, inputTime);
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
    inputs: count,
    ok,
    errors,
    findings,
    firstFindings: first,
    seconds,
    inputsPerSecond: count / seconds,
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
