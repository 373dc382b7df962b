/**
 * One bench session: a runtime and N plugins, each its own process (optionally pinned to CPUs
 * with taskset), driven through the runtime's phases (phases.ts). Once every plugin is
 * registered, before any event, the driver waits for them to be idle (IDLE_MS) and reads every
 * process's anonymous memory; at each mark it reads every process's CPU time (and, with `alloc`, the
 * TypeScript plugins' allocation) while no cycle runs; every SAMPLE_MS and at each mark, every
 * process's anonymous memory (its peak is the session's highest sample); at the end, every
 * process's peak RSS and PSS.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { socketDir } from "../../test/interop/support.js";
import type { PhaseFigures } from "./phases.js";
import { anonKiB, cpuNanos, memoryKiB } from "./procstat.js";

export type Impl = "TS" | "Go";
export type Command = [string, string[]];
/** Where the processes run: anywhere, all on CPU 0, or the runtime on CPU 0 and the plugins on CPU 1. */
export type Pinning = "free" | "same" | "split";

/** The programs of each role. */
export interface Programs {
  runtime: Record<Impl, Command>;
  plugin: Record<Impl, Command>;
  /** The compiled `nri-wire/plugin` entry. */
  pluginEntry: string;
}

export interface Setup {
  runtime: Impl;
  plugin: Impl;
  plugins: number;
  /** The CreateContainerRequest file. */
  request: string;
  phases: string;
  /** busyPollMicros of the TypeScript processes; undefined: their default. */
  busyPoll?: number;
  /** What the TypeScript processes observe (`--observe`, observe.ts); undefined: nothing. */
  observe?: string;
  /** true: the TypeScript processes warm up (`--warm-up`). */
  warmUp?: true;
  pin?: Pinning;
  /** Measure the TypeScript processes' allocation per phase. */
  alloc?: boolean;
  /** Extra node flags of the TypeScript processes (profiling: --cpu-prof, --trace-gc, ...). */
  nodeFlags?: string[];
  /** End the processes with SIGINT (a TypeScript process then exits normally, writing its profile), SIGKILL after 10 s. */
  graceful?: boolean;
  /** Extra environment of the TypeScript processes (MALLOC_ARENA_MAX, ...). */
  env?: Readonly<Record<string, string>>;
}

/**
 * How long the registered processes sit idle before their idle memory is read, ms: at least
 * IDLE_MS, then until none of them has used more than 1 ms of CPU in IDLE_QUIET_MS (a warm-up
 * done), at most IDLE_LIMIT_MS.
 */
export const IDLE_MS = 1000;
export const IDLE_QUIET_MS = 250;
export const IDLE_LIMIT_MS = 15_000;
/** How often every process's anonymous memory is sampled, ms. */
export const SAMPLE_MS = 20;

/** A phase's figures with the CPU time all processes spent on it. */
export interface PhaseResult extends PhaseFigures {
  cpu_ns: { runtime: number; plugins: number[] };
  /** CPU time of all processes per event, µs. */
  cpu_us_per_event: number;
  plugin_alloc?: { alloc_bytes: number; gcs: number }[];
}

/**
 * A process's memory in KiB: peak RSS (VmHWM) and PSS at the end; anonymous memory registered
 * and idle, its highest sample, and at the end (after the last phase, idle again).
 */
export interface ProcessMemory {
  hwm: number;
  pss: number;
  anonIdle: number;
  anonPeak: number;
  anonEnd: number;
}

export interface SessionResult {
  phases: PhaseResult[];
  memory: { runtime: ProcessMemory; plugins: ProcessMemory[] };
}

/** The highest anonymous memory of each process, sampled every SAMPLE_MS and whenever asked. */
class AnonSampler {
  readonly peak: number[];
  readonly #timer: NodeJS.Timeout;

  constructor(private readonly pids: readonly number[]) {
    this.peak = pids.map(() => 0);
    this.#timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  /** Samples every process now; returns their anonymous memory. */
  sample(): number[] {
    return this.pids.map((pid, i) => {
      const kib = anonKiB(pid) ?? 0;
      if (kib > this.peak[i]!) this.peak[i] = kib;
      return kib;
    });
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** A child process whose stdout lines are read one at a time. */
class Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  #queue: string[] = [];
  #waiter: (() => void) | undefined;
  #err = "";
  #gone = false;

  constructor(
    readonly what: string,
    cmd: Command,
    stdin: boolean,
    env?: Readonly<Record<string, string>>,
  ) {
    this.child = spawn(cmd[0], cmd[1], { stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"], ...(env === undefined ? {} : { env: { ...process.env, ...env } }) });
    createInterface({ input: this.child.stdout! }).on("line", (l) => {
      this.#queue.push(l);
      this.#waiter?.();
    });
    this.child.stderr!.on("data", (d: Buffer) => (this.#err = (this.#err + d.toString()).slice(-8192)));
    this.exited = new Promise((res) =>
      this.child.on("exit", (code) => {
        this.#gone = true;
        this.#waiter?.();
        res(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The next stdout line satisfying `pred` (others are dropped). */
  async next(pred: (l: string) => boolean, timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.#queue.length > 0) {
        const l = this.#queue.shift()!;
        if (pred(l)) return l;
      }
      if (this.#gone) throw new Error(`bench: ${this.what} exited before the expected line; stderr: ${this.#err}`);
      if (Date.now() > deadline) throw new Error(`bench: ${this.what}: no expected line within ${timeoutMs} ms; stderr: ${this.#err}`);
      await new Promise<void>((res) => {
        const t = setTimeout(res, Math.max(1, deadline - Date.now()));
        this.#waiter = () => {
          clearTimeout(t);
          res();
        };
      });
      this.#waiter = undefined;
    }
  }

  write(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }
}

function pinned(cmd: Command, cpus: string | undefined): Command {
  return cpus === undefined ? cmd : ["taskset", ["-c", cpus, cmd[0], ...cmd[1]]];
}

const isJson = (l: string): boolean => l.startsWith("{");
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until the processes are idle (see IDLE_MS). */
async function quiet(pids: readonly number[]): Promise<void> {
  const start = performance.now();
  await sleep(IDLE_MS);
  // A process that is gone ends the wait: the session's next read reports it with its stderr.
  const cpu = (pid: number): number => (existsSync(`/proc/${pid}`) ? cpuNanos(pid) : Number.NaN);
  for (;;) {
    const before = pids.map(cpu);
    await sleep(IDLE_QUIET_MS);
    const used = pids.map((pid, i) => cpu(pid) - before[i]!);
    if (used.some(Number.isNaN) || used.every((ns) => ns <= 1e6) || performance.now() - start > IDLE_LIMIT_MS) return;
  }
}

/** Runs one session and returns each phase's figures. */
export async function runSession(programs: Programs, s: Setup): Promise<SessionResult> {
  const socket = join(socketDir(), "nri.sock");
  const pin = s.pin ?? "free";
  const tsFlags = (impl: Impl): string[] =>
    impl !== "TS"
      ? []
      : [
          ...(s.busyPoll === undefined ? [] : ["--busy-poll", String(s.busyPoll)]),
          ...(s.warmUp === true ? ["--warm-up"] : []),
          ...(s.alloc === true ? ["--alloc"] : []),
          ...(s.observe === undefined ? [] : ["--observe", s.observe]),
        ];
  const withFlags = ([cmd, args]: Command, impl: Impl): Command => [cmd, impl === "TS" ? [...(s.nodeFlags ?? []), ...args] : args];
  const [rcmd, rargs] = withFlags(programs.runtime[s.runtime], s.runtime);
  const runtime = new Proc(
    `${s.runtime} runtime`,
    pinned([rcmd, [...rargs, "--socket", socket, "--plugins", String(s.plugins), "--request", s.request, "--phases", s.phases, ...tsFlags(s.runtime)]], pin === "free" ? undefined : "0"),
    true,
    s.runtime === "TS" ? s.env : undefined,
  );
  const procs: Proc[] = [runtime];
  let stopSampling = (): void => undefined;
  try {
    await runtime.next((l) => l === "ready", 60_000);
    const [pcmd, pargs] = withFlags(programs.plugin[s.plugin], s.plugin);
    const plugins = Array.from(
      { length: s.plugins },
      (_, i) =>
        new Proc(
          `${s.plugin} plugin ${i}`,
          pinned([pcmd, [...pargs, "--socket", socket, "--idx", String(10 + i), "--name", `bench-${i}`, ...tsFlags(s.plugin)]], pin === "free" ? undefined : pin === "same" ? "0" : "1"),
          false,
          s.plugin === "TS" ? s.env : undefined,
        ),
    );
    procs.push(...plugins);
    await runtime.next((l) => l === '{"mark":"synced"}', 60_000);
    await quiet(procs.map((p) => p.pid));
    const sampler = new AnonSampler(procs.map((p) => p.pid));
    stopSampling = () => sampler.stop();
    const idle = sampler.sample();
    runtime.write("go");
    const check = JSON.parse(await runtime.next((l) => l.includes('"annotations"'), 60_000)) as { annotations: number };
    if (check.annotations !== s.plugins) throw new Error(`bench: ${s.plugins} plugins but ${check.annotations} annotations in the merged reply`);
    const allocOf = async (): Promise<{ alloc_bytes: number; gcs: number }[] | undefined> => {
      if (s.alloc !== true || s.plugin !== "TS") return undefined;
      for (const p of plugins) p.child.kill("SIGUSR2");
      return Promise.all(plugins.map(async (p) => JSON.parse(await p.next((l) => l.includes('"alloc_bytes"'), 10_000)) as { alloc_bytes: number; gcs: number }));
    };
    const phases: PhaseResult[] = [];
    let before: number[] | undefined;
    let pending: PhaseFigures | undefined;
    for (;;) {
      const line = await runtime.next(isJson, 300_000);
      const msg = JSON.parse(line) as { mark?: string } & PhaseFigures;
      if (msg.mark === undefined) {
        pending = msg;
        continue;
      }
      const now = procs.map((p) => cpuNanos(p.pid));
      sampler.sample();
      const alloc = await allocOf();
      if (pending !== undefined && before !== undefined) {
        const d = now.map((v, i) => v - before![i]!);
        phases.push({
          ...pending,
          cpu_ns: { runtime: d[0]!, plugins: d.slice(1) },
          cpu_us_per_event: d.reduce((a, b) => a + b, 0) / 1000 / (3 * pending.cycles),
          ...(alloc === undefined ? {} : { plugin_alloc: alloc }),
        });
        pending = undefined;
      }
      if (msg.mark === "end") break;
      before = procs.map((p) => cpuNanos(p.pid));
      runtime.write("go");
    }
    const end = sampler.sample();
    const memory = procs.map((p, i): ProcessMemory => ({ ...memoryKiB(p.pid), anonIdle: idle[i]!, anonPeak: sampler.peak[i]!, anonEnd: end[i]! }));
    return { phases, memory: { runtime: memory[0]!, plugins: memory.slice(1) } };
  } finally {
    stopSampling();
    if (s.graceful === true) {
      for (const p of procs) p.child.kill("SIGINT");
      const t = setTimeout(() => procs.forEach((p) => p.child.kill("SIGKILL")), 10_000);
      await Promise.all(procs.map((p) => p.exited));
      clearTimeout(t);
    }
    for (const p of procs) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
  }
}
