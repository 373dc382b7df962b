import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { go, prerequisites } from "../support/prerequisites.js";
import { waitFor } from "../support/wait.js";

/** Where the interop programs are built to (ignored by git). */
export const BIN_DIR = resolve(import.meta.dirname, ".bin");
const ROOT = resolve(import.meta.dirname, "../..");

/**
 * Whether the Go peers can be built for `skipped` (what does not run without them): see
 * test/support/prerequisites.ts for the notice, `CI=true` and `NRI_WIRE_GO=0`.
 */
export function goAvailable(area = "interop", skipped = "the tests that need a Go peer"): boolean {
  return prerequisites(area, skipped, [go()]).ok;
}

/**
 * Builds the Go program in `test/interop/<dir>` to `.bin/<name>`, with extra `go build` flags
 * (e.g. `-modfile` and `-tags` to build against another pinned release); a failed build throws.
 * The module files are read-only to the build: a go.mod or go.sum that lacks something fails it
 * rather than being rewritten in the working tree.
 */
export function goBuild(dir: string, name: string, flags: readonly string[] = []): string {
  const out = join(BIN_DIR, name);
  execFileSync("go", ["build", ...flags, "-o", out, "."], {
    cwd: resolve(import.meta.dirname, dir),
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, GOFLAGS: "-mod=readonly", GOTOOLCHAIN: "local" },
  });
  return out;
}

export { socketDir } from "../support/socket.js";

/** The command that runs a TypeScript entry point of this repository. */
export function tsCommand(script: string): [string, string[]] {
  return [process.execPath, ["--import", "tsx", join(ROOT, script)]];
}

/** A running peer with its stdout lines. */
export interface Peer {
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the first line matching `pred` (rejects if the process exits first; no deadline: see test/support/wait.ts). */
  waitFor(pred: (line: string) => boolean): Promise<string>;
  /** Resolves with the exit code once the process has exited (its last output may still be unread). */
  readonly exited: Promise<number | null>;
  /**
   * Resolves with the exit code once the process has exited and its stdout and stderr have ended
   * (every line read): only then are `lines` and `stderr()` whole. A child it started that
   * holds either pipe holds this back.
   */
  readonly closed: Promise<number | null>;
  stderr(): string;
}

/** Peers still running, killed after their test file (a test that timed out may leave one). */
const running = new Set<ChildProcess>();

/** Kills every peer still running; test/support/setup.ts calls it after each test file. */
export function killPeers(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

export function startPeer(command: [string, string[]], args: string[]): Peer {
  const child = spawn(command[0], [...command[1], ...args], { stdio: ["ignore", "pipe", "pipe"], cwd: ROOT });
  running.add(child);
  child.on("exit", () => running.delete(child));
  const lines: string[] = [];
  let err = "";
  const waiters: { pred: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  const output = createInterface({ input: child.stdout! });
  output.on("line", (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.pred(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.length > 1 << 20) err = err.slice(-(1 << 19));
  });
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  const closed = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
  return {
    child,
    lines,
    exited,
    closed,
    stderr: () => err,
    waitFor(pred) {
      const seen = lines.find(pred);
      if (seen !== undefined) return Promise.resolve(seen);
      const line = new Promise<string>((res, rej) => {
        waiters.push({ pred, resolve: res });
        void exited.then((code) => rej(new Error(`interop: peer exited with ${code} before the expected line; stderr:\n${err}`)));
      });
      return waitFor(line, () => `a line from ${command[0]} ${args.join(" ")}; its stderr so far:\n${err}`);
    },
  };
}

/** Runs a peer to completion and returns its exit code, its stdout lines and its stderr, whole. */
export async function runPeer(command: [string, string[]], args: string[]): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const p = startPeer(command, args);
  await waitFor(p.exited, () => `${command[0]} ${args.join(" ")} to exit; its stderr so far:\n${p.stderr()}`);
  // A process can exit before its last output is read.
  const code = await waitFor(p.closed, () => `the output of ${command[0]} ${args.join(" ")} to end after it exited (does a child it started hold the pipe?)`);
  return { code, lines: p.lines, stderr: p.stderr() };
}
