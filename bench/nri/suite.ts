/**
 * The NRI end-to-end regimes of `npm run bench`, TypeScript and Go side by side in interleaved
 * rounds (each round starts one row later, so that no row always runs first or after the same
 * other one):
 *
 * - a long-lived pair (one session per row and round): a fresh process's first cycles back to
 *   back, warm-up until two 1,000-cycle windows agree within 5%, steady state, then sparse
 *   cycles 20 ms and 100 ms apart, warm;
 * - fresh pairs: sparse cycles from a fresh process's first event, 20 ms and 100 ms apart;
 * - the synthetic request: first cycles and steady state again;
 * - once per plugin count, the TypeScript pair with allocation metering.
 */
import { IMAGE_ENGINE_ENV } from "../../src/ship/footprint.js";
import { type Command, type Impl, type Pinning, type Programs, type SessionResult, type Setup, runSession } from "./session.js";

export interface Row {
  label: string;
  runtime: Impl;
  plugin: Impl;
  busyPoll?: number;
  /** `--observe` of the TypeScript processes. */
  observe?: string;
  /** true: the TypeScript processes warm up (`--warm-up`; off by default). */
  warmUp?: true;
  /** Node flags and environment of the TypeScript processes (the memory settings). */
  nodeFlags?: string[];
  env?: Readonly<Record<string, string>>;
  /**
   * The plugins are the bench plugin as `nri-wire build` makes it (bench/nri/plugin-entry.ts, a
   * single executable) with its default options or the low-footprint profile, instead of the
   * bench program on Node.
   */
  executable?: ExecutableKind;
}

/**
 * The rows of every table: the TypeScript pair (defaults), the Go pair (the base of the ratios),
 * the TypeScript pair with busy polling off, and TypeScript plugins under the Go runtime (what a
 * plugin costs under containerd or CRI-O, which run Go's pkg/adaptation).
 */
export const ROWS: readonly Row[] = [
  { label: "TS + TS", runtime: "TS", plugin: "TS" },
  { label: "Go + Go", runtime: "Go", plugin: "Go" },
  { label: "TS + TS, busy polling off", runtime: "TS", plugin: "TS", busyPoll: 0 },
  { label: "Go + TS", runtime: "Go", plugin: "TS" },
];
export const BASE = "Go + Go";

/**
 * The rows of the fresh sparse regime: ROWS, and the TypeScript processes with the warm-up they
 * can be asked for (what it buys a fresh process's first events).
 */
export const FRESH_ROWS: readonly Row[] = [
  ...ROWS,
  { label: "TS + TS, warm-up", runtime: "TS", plugin: "TS", warmUp: true },
  { label: "Go + TS, warm-up", runtime: "Go", plugin: "TS", warmUp: true },
];

export interface Counts {
  rounds: number;
  /** Cycles of the fresh back-to-back phase. */
  fresh: number;
  /** Whether the long-lived pair warms up by the window rule before its steady state. */
  warm: boolean;
  steadySeconds: number;
  /** Cycles of each sparse phase of the long-lived pair, by spacing (ms). */
  warmSparse: Record<20 | 100, number>;
  /** Cycles of each fresh sparse session, by spacing (ms). */
  freshSparse: Record<20 | 100, number>;
  plugins: readonly number[];
}

export const FULL: Counts = { rounds: 3, fresh: 2000, warm: true, steadySeconds: 5, warmSparse: { 20: 150, 100: 50 }, freshSparse: { 20: 100, 100: 40 }, plugins: [1, 3] };
export const QUICK: Counts = { rounds: 1, fresh: 100, warm: false, steadySeconds: 0.3, warmSparse: { 20: 5, 100: 2 }, freshSparse: { 20: 3, 100: 2 }, plugins: [1, 3] };

/** Sessions of one row, one per round. */
export type ByRow = Record<string, SessionResult[]>;

export interface Payload {
  name: string;
  path: string;
  bytes: number;
}

export interface NriResults {
  counts: Counts;
  payloads: Payload[];
  /** By plugin count: the long-lived sessions of each payload, the fresh sparse ones, the allocation run. */
  byPlugins: Record<
    number,
    {
      longLived: Record<string, ByRow>;
      freshSparse: Record<20 | 100, ByRow>;
      alloc: SessionResult;
    }
  >;
}

function longLivedPhases(c: Counts, sparse: boolean): string {
  const p = [`fresh:${c.fresh}`, ...(c.warm ? ["warm"] : []), `steady:${c.steadySeconds}`];
  if (sparse) p.push(`sparse:20:${c.warmSparse[20]}`, `sparse:100:${c.warmSparse[100]}`);
  return p.join(",");
}

/** Runs `each` for every row in every round, each round starting one row later. */
async function interleaved(c: Counts, rows: readonly Row[], each: (row: Row) => Promise<SessionResult>, log: (s: string) => void): Promise<ByRow> {
  const out: ByRow = Object.fromEntries(rows.map((r) => [r.label, []]));
  for (let round = 0; round < c.rounds; round++) {
    for (let k = 0; k < rows.length; k++) {
      const row = rows[(k + round) % rows.length]!;
      const t0 = performance.now();
      out[row.label]!.push(await each(row));
      log(`  round ${round + 1}: ${row.label} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
  }
  return out;
}

/** Every regime for every plugin count; `payloads[0]` is the main one. */
export async function runNri(programs: Programs, payloads: Payload[], c: Counts, log: (s: string) => void): Promise<NriResults> {
  const main = payloads[0]!;
  const results: NriResults = { counts: c, payloads, byPlugins: {} };
  for (const n of c.plugins) {
    const setup = (row: Row, request: string, phases: string) => ({
      runtime: row.runtime,
      plugin: row.plugin,
      plugins: n,
      request,
      phases,
      ...(row.busyPoll === undefined ? {} : { busyPoll: row.busyPoll }),
      ...(row.warmUp === undefined ? {} : { warmUp: row.warmUp }),
    });
    const longLived: Record<string, ByRow> = {};
    for (const [i, p] of payloads.entries()) {
      log(`${n} plugin(s), ${p.name} request: first cycles, steady state${i === 0 ? ", sparse cycles warm" : ""}`);
      longLived[p.name] = await interleaved(c, ROWS, (row) => runSession(programs, setup(row, p.path, longLivedPhases(c, i === 0))), log);
    }
    const freshSparse = {} as Record<20 | 100, ByRow>;
    for (const ms of [20, 100] as const) {
      log(`${n} plugin(s): sparse cycles ${ms} ms apart from a fresh process`);
      freshSparse[ms] = await interleaved(c, FRESH_ROWS, (row) => runSession(programs, setup(row, main.path, `sparse:${ms}:${c.freshSparse[ms]}`)), log);
    }
    log(`${n} plugin(s): allocation of the TypeScript pair`);
    const alloc = await runSession(programs, { ...setup(ROWS[0]!, main.path, longLivedPhases(c, false)), alloc: true });
    results.byPlugins[n] = { longLived, freshSparse, alloc };
  }
  return results;
}

/** The busy-polling study: sparse cycles with polling on and off, the processes free, on one CPU, on separate CPUs. */
export interface PollingResults {
  counts: Counts;
  /** By plugin count, then pinning: the long-lived (warm) and fresh sessions of each row. */
  byPlugins: Record<number, Record<Pinning, { warm: ByRow; fresh: ByRow }>>;
}

export const PINNINGS: readonly Pinning[] = ["free", "same", "split"];

export async function runPolling(programs: Programs, payload: Payload, c: Counts, log: (s: string) => void): Promise<PollingResults> {
  const rows: Row[] = [ROWS[0]!, ROWS[2]!, ROWS[1]!];
  const out: PollingResults = { counts: c, byPlugins: {} };
  for (const n of c.plugins) {
    out.byPlugins[n] = {} as Record<Pinning, { warm: ByRow; fresh: ByRow }>;
    for (const pin of PINNINGS) {
      const setup = (row: Row, phases: string) => ({ runtime: row.runtime, plugin: row.plugin, plugins: n, request: payload.path, phases, pin, ...(row.busyPoll === undefined ? {} : { busyPoll: row.busyPoll }) });
      log(`busy polling, ${n} plugin(s), processes ${pin}`);
      const warm = await interleaved(c, rows, (row) => runSession(programs, setup(row, [...(c.warm ? ["warm"] : [`fresh:${c.fresh}`]), `steady:${Math.min(3, c.steadySeconds)}`, `sparse:20:${c.warmSparse[20]}`, `sparse:100:${c.warmSparse[100]}`].join(","))), log);
      const fresh = await interleaved(c, rows, (row) => runSession(programs, setup(row, `sparse:20:${c.freshSparse[20]}`)), log);
      out.byPlugins[n]![pin] = { warm, fresh };
    }
  }
  return out;
}

/**
 * The cost of what operators turn on (`--operations`): the TypeScript pair with nothing, with one
 * pass-through interceptor on each side, with Prometheus metrics, with traces (no SDK) and with
 * all three, against Go + Go in the same rounds; one plugin, the recorded request.
 */
export const OPERATION_ROWS: readonly Row[] = [
  { label: "TS + TS", runtime: "TS", plugin: "TS" },
  { label: "Go + Go", runtime: "Go", plugin: "Go" },
  { label: "TS + TS, interceptors", runtime: "TS", plugin: "TS", observe: "interceptors" },
  { label: "TS + TS, metrics", runtime: "TS", plugin: "TS", observe: "metrics" },
  { label: "TS + TS, traces (no SDK)", runtime: "TS", plugin: "TS", observe: "traces" },
  { label: "TS + TS, all three", runtime: "TS", plugin: "TS", observe: "interceptors,metrics,traces" },
];

export interface OperationsResults {
  counts: Counts;
  rows: ByRow;
}

export async function runOperations(programs: Programs, payload: Payload, c: Counts, log: (s: string) => void): Promise<OperationsResults> {
  log("operations: interceptors, metrics and traces, 1 plugin: steady state, sparse cycles warm");
  const phases = [...(c.warm ? ["warm"] : [`fresh:${c.fresh}`]), `steady:${c.steadySeconds}`, `sparse:20:${c.warmSparse[20]}`].join(",");
  const rows = await interleaved(c, OPERATION_ROWS, (row) => runSession(programs, { runtime: row.runtime, plugin: row.plugin, plugins: 1, request: payload.path, phases, ...(row.observe === undefined ? {} : { observe: row.observe }) }), log);
  return { counts: c, rows };
}

/**
 * Settings of a plugin's Node process tried for its private memory (`--only footprint`), each a
 * row of the TypeScript plugin under the Go runtime, so that only the plugin has it: V8's young
 * generation, its garbage collector and compiler threads, glibc's malloc arenas.
 */
export const MEMORY_SETTINGS: readonly { name: string; nodeFlags?: string[]; env?: Readonly<Record<string, string>> }[] = [
  { name: "--max-semi-space-size=1", nodeFlags: ["--max-semi-space-size=1"] },
  { name: "--single-threaded-gc", nodeFlags: ["--single-threaded-gc"] },
  { name: "--v8-pool-size=1", nodeFlags: ["--v8-pool-size=1"] },
  { name: "MALLOC_ARENA_MAX=1", env: { MALLOC_ARENA_MAX: "1" } },
  { name: "all four", nodeFlags: ["--max-semi-space-size=1", "--single-threaded-gc", "--v8-pool-size=1"], env: { MALLOC_ARENA_MAX: "1" } },
];

/** The executables of the bench plugin `--only footprint` runs: built with the defaults, with the low-footprint profile, or for Bun (`--engine bun`). */
export type ExecutableKind = "default" | "low-footprint" | "bun";

/**
 * TypeScript plugins as a node runs them: the executables `nri-wire build` makes, under the Go
 * runtime, as a runtime launches them and with the environment their image's config sets.
 */
export const EXECUTABLE_ROWS: readonly Row[] = [
  { label: "Go + TS executable", runtime: "Go", plugin: "TS", executable: "default" },
  { label: "Go + TS executable, low-footprint profile", runtime: "Go", plugin: "TS", executable: "low-footprint" },
  { label: "Go + TS executable, Bun", runtime: "Go", plugin: "TS", executable: "bun" },
  { label: "Go + TS executable, image's environment", runtime: "Go", plugin: "TS", executable: "default", env: IMAGE_ENGINE_ENV.node ?? {} },
  { label: "Go + TS executable, Bun, image's environment", runtime: "Go", plugin: "TS", executable: "bun", env: IMAGE_ENGINE_ENV.bun ?? {} },
];

/** The fresh sessions of `--only footprint`: FRESH_ROWS and the built executables. */
export const FOOTPRINT_FRESH_ROWS: readonly Row[] = [...FRESH_ROWS, ...EXECUTABLE_ROWS];

/**
 * The rows of `--only footprint`'s long-lived sessions, by plugin count: the TypeScript pair, the
 * Go pair, TypeScript plugins under the Go runtime with and without the warm-up (which compiles
 * code a plugin holds) and as built executables, and with one plugin the memory settings.
 */
export function footprintRows(plugins: number): Row[] {
  const rows: Row[] = [ROWS[0]!, ROWS[1]!, ROWS[3]!, ...EXECUTABLE_ROWS, FRESH_ROWS.find((r) => r.label === "Go + TS, warm-up")!];
  if (plugins !== 1) return rows;
  return [...rows, ...MEMORY_SETTINGS.map((m) => ({ label: `Go + TS, ${m.name}`, runtime: "Go" as const, plugin: "TS" as const, ...(m.nodeFlags === undefined ? {} : { nodeFlags: m.nodeFlags }), ...(m.env === undefined ? {} : { env: m.env }) }))];
}

export interface FootprintResults {
  counts: Counts;
  payload: Payload;
  /** By plugin count: the long-lived sessions (footprintRows) and the fresh ones 20 ms apart (FRESH_ROWS). */
  byPlugins: Record<number, { longLived: ByRow; fresh: ByRow }>;
}

/**
 * What a plugin costs a node (`--only footprint`): each process's memory, steady events/s and warm
 * cycles 20 ms apart (long-lived sessions, with the memory settings), and a fresh process's first
 * cycles 20 ms apart with and without the warm-up; the `executable` rows run `executables`.
 */
export async function runFootprint(programs: Programs, executables: Record<ExecutableKind, Command>, payload: Payload, c: Counts, log: (s: string) => void): Promise<FootprintResults> {
  const out: FootprintResults = { counts: c, payload, byPlugins: {} };
  const session = (row: Row, s: Setup) => runSession(row.executable === undefined ? programs : { ...programs, plugin: { ...programs.plugin, TS: executables[row.executable] } }, s);
  for (const n of c.plugins) {
    const setup = (row: Row, phases: string) => ({
      runtime: row.runtime,
      plugin: row.plugin,
      plugins: n,
      request: payload.path,
      phases,
      ...(row.warmUp === undefined ? {} : { warmUp: row.warmUp }),
      ...(row.nodeFlags === undefined ? {} : { nodeFlags: row.nodeFlags }),
      ...(row.env === undefined ? {} : { env: row.env }),
    });
    log(`footprint, ${n} plugin(s): memory, steady state, sparse cycles warm`);
    const phases = [`fresh:${c.fresh}`, ...(c.warm ? ["warm"] : []), `steady:${c.steadySeconds}`, `sparse:20:${c.warmSparse[20]}`].join(",");
    const longLived = await interleaved(c, footprintRows(n), (row) => session(row, setup(row, phases)), log);
    log(`footprint, ${n} plugin(s): sparse cycles 20 ms apart from a fresh process`);
    const fresh = await interleaved(c, FOOTPRINT_FRESH_ROWS, (row) => session(row, setup(row, `sparse:20:${c.freshSparse[20]}`)), log);
    out.byPlugins[n] = { longLived, fresh };
  }
  return out;
}
