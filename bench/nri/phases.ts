/**
 * The phases a bench runtime runs, the TypeScript twin of test/interop/nri-bench/phases.go; both
 * print the same keys. A run is a comma-separated list:
 *
 * - `fresh:N`: N cycles back to back, measured from the first (the regime of a fresh process);
 * - `warm`: cycles until two consecutive 1,000-cycle windows agree within 5% (at most 60 s);
 * - `steady:S`: S seconds of cycles back to back;
 * - `sparse:MS:N`: N cycles, each MS milliseconds after the previous one ended (a node's pace).
 *
 * Once every plugin is registered (`synced`), before each phase and after the last the runtime
 * prints `{"mark": ...}` and waits for a line on stdin, so that the driver reads every process's
 * CPU time and memory while no cycle runs.
 */
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";

export type Phase = { kind: "fresh"; count: number } | { kind: "warm" } | { kind: "steady"; seconds: number } | { kind: "sparse"; millis: number; count: number };

/** What a runtime prints for each phase. */
export interface PhaseFigures {
  phase: string;
  cycles: number;
  seconds: number;
  /** Events (three per cycle) per second of cycle time. */
  events_per_sec: number;
  p50_us: number;
  p99_us: number;
  max_us: number;
  /** `warm`: whether two windows agreed before the limit. */
  converged?: boolean;
  /** `warm`: events/s of each 1,000-cycle window; `fresh`: of each 250-cycle window. */
  windows?: number[];
  /** `fresh` and `sparse`: every cycle's latency in µs, in order. */
  lat?: number[];
  /** With `--alloc` (TypeScript only): bytes the process allocated on its JS heap during the phase. */
  alloc_bytes?: number;
  gcs?: number;
}

export const WARM_WINDOW = 1000;
export const WARM_TOLERANCE = 0.05;
export const WARM_LIMIT_MS = 60_000;
export const FRESH_WINDOW = 250;

/** Parses a phase list; the error names the bad phase. */
export function parsePhases(spec: string): Phase[] {
  return spec.split(",").map((p): Phase => {
    const f = p.split(":");
    const num = (i: number): number => {
      const v = Number(f[i]);
      if (f[i] === undefined || !(v > 0)) throw new Error(`bench: phase "${p}": field ${i} is not a positive number`);
      return v;
    };
    switch (f[0]) {
      case "fresh":
        return { kind: "fresh", count: num(1) };
      case "warm":
        return { kind: "warm" };
      case "steady":
        return { kind: "steady", seconds: num(1) };
      case "sparse":
        return { kind: "sparse", millis: num(1), count: num(2) };
      default:
        throw new Error(`bench: phase "${p}": unknown kind`);
    }
  });
}

/** Something measured around each phase (allocation), started at a mark and read at the next. */
export interface PhaseProbe {
  start(): void;
  read(): { alloc_bytes: number; gcs: number };
}

let stdinLines: AsyncIterator<string> | undefined;

/**
 * Prints `{"mark": name}` and waits for the driver's go-ahead line on stdin, so that it reads
 * every process's CPU time and memory while no cycle runs.
 */
export async function mark(name: string): Promise<void> {
  stdinLines ??= createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  console.log(JSON.stringify({ mark: name }));
  if ((await stdinLines.next()).done === true) throw new Error("bench: runtime: stdin ended");
}

/** Runs the phases with `cycle`, printing a mark before each and one JSON line after each. */
export async function runPhases(phases: readonly Phase[], cycle: () => Promise<void>, probe?: PhaseProbe): Promise<void> {
  for (const [i, p] of phases.entries()) {
    await mark(String(i));
    probe?.start();
    const lat: number[] = [];
    const timed = async (): Promise<void> => {
      const t0 = performance.now();
      await cycle();
      lat.push((performance.now() - t0) * 1000);
    };
    const start = performance.now();
    const fig: Partial<PhaseFigures> = { phase: p.kind };
    switch (p.kind) {
      case "fresh": {
        for (let n = 0; n < p.count; n++) await timed();
        fig.lat = [...lat];
        fig.windows = [];
        for (let w = 0; w + FRESH_WINDOW <= lat.length; w += FRESH_WINDOW) {
          const sum = lat.slice(w, w + FRESH_WINDOW).reduce((a, b) => a + b, 0);
          fig.windows.push((3 * FRESH_WINDOW) / (sum / 1e6));
        }
        break;
      }
      case "warm": {
        let prev = 0;
        fig.converged = false;
        fig.windows = [];
        while (performance.now() - start < WARM_LIMIT_MS) {
          const w0 = performance.now();
          for (let n = 0; n < WARM_WINDOW; n++) await timed();
          const rate = WARM_WINDOW / ((performance.now() - w0) / 1000);
          fig.windows.push(3 * rate);
          if (prev > 0 && Math.abs(rate - prev) <= WARM_TOLERANCE * prev) {
            fig.converged = true;
            break;
          }
          prev = rate;
        }
        break;
      }
      case "steady": {
        const end = start + p.seconds * 1000;
        while (performance.now() < end) await timed();
        break;
      }
      case "sparse": {
        for (let n = 0; n < p.count; n++) {
          if (n > 0) await sleep(p.millis);
          await timed();
        }
        fig.phase = `sparse:${p.millis}`;
        fig.lat = [...lat];
        break;
      }
    }
    const elapsed = (performance.now() - start) / 1000;
    const sorted = [...lat].sort((a, b) => a - b);
    const pct = (q: number): number => sorted[Math.floor(q * (sorted.length - 1))] ?? 0;
    const busy = lat.reduce((a, b) => a + b, 0);
    Object.assign(fig, {
      cycles: lat.length,
      seconds: elapsed,
      events_per_sec: (3 * lat.length) / (busy / 1e6),
      p50_us: pct(0.5),
      p99_us: pct(0.99),
      max_us: sorted.at(-1) ?? 0,
      ...probe?.read(),
    });
    console.log(JSON.stringify(fig));
  }
  await mark("end");
}
