import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { go, linux, type Need, root } from "../support/prerequisites.js";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "../..");

/** The nri-wire command, run from the source with tsx (from ROOT, where tsx resolves). */
export const NRI_WIRE: readonly string[] = [process.execPath, "--import", "tsx", join(ROOT, "src/cli/main.ts")];

/** What the real-runtime suites need: root on Linux (they start runtimes, mounts and cgroups) and Go to build them. */
export const RUNTIME_NEEDS: readonly Need[] = [linux, root, go("it builds the runtimes")];

/** Paths printed by scripts/runtimes/build.sh as KEY=VALUE lines. */
export type Built = Record<string, string>;

/**
 * Builds (or finds cached) what `runtimes` need with `script` (scripts/cluster/build.sh builds
 * the cluster suite's parts); a failed step throws the script's own message.
 */
export async function build(runtimes: readonly string[], script = join(ROOT, "scripts/runtimes/build.sh")): Promise<Built> {
  const out = await new Promise<string>((res, rej) => {
    // stderr (progress, and on failure the step and its log file) goes straight to the terminal.
    const child = spawn("bash", [script, ...runtimes], { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d.toString()));
    child.on("error", rej);
    child.on("exit", (code) => (code === 0 ? res(text) : rej(new Error(`runtimes: ${script} ${runtimes.join(" ")} exited with ${code}; its last lines above name the step and log file`))));
  });
  const built: Built = {};
  for (const line of out.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) built[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return built;
}

/**
 * The directory for one runtime's logs (runtime, plugins) in this run, `run-<name>-<pid>`, kept
 * afterwards so the log a failure names can still be read. Those of runs that have ended are
 * removed; those of a run still going (another checkout's) are left alone, as it writes there.
 */
export function logDir(built: Built, name: string): string {
  const logs = join(built.CACHE!, "logs");
  mkdirSync(logs, { recursive: true });
  for (const entry of readdirSync(logs)) {
    const m = /^run-(.+)-(\d+)$/.exec(entry);
    if (m?.[1] === name && !existsSync(`/proc/${m[2]}`)) rmSync(join(logs, entry), { recursive: true, force: true });
  }
  const dir = join(logs, `run-${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A directory for one runtime's private state, config and logs (short: socket paths are limited). */
export function workDir(name: string): string {
  return mkdtempSync(`/tmp/nriw-${name}-`);
}

/** Resolves once `cond` holds, checking every 100 ms; throws `what` with `detail()` after `timeoutMs`. */
export async function waitUntil(cond: () => boolean, what: string, timeoutMs: number, detail: () => string = () => ""): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`runtimes: ${what} (waited ${timeoutMs} ms)${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The text of a file, or "" when it does not exist (yet). */
export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** A process this suite started, its output in a log file. */
export interface Started {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly log: string;
  readonly exited: Promise<number | null>;
  /** Whether it has exited. */
  done(): boolean;
}

/** Starts `cmd` with stdout and stderr appended to `log`. */
export function startLogged(cmd: string, args: readonly string[], log: string, env: NodeJS.ProcessEnv = process.env, cwd = ROOT): Started {
  const fd = openSync(log, "a");
  const child = spawn(cmd, args, { stdio: ["ignore", fd, fd], env, cwd });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`runtimes: cannot start ${cmd}; log: ${log}`);
  let finished = false;
  const exited = new Promise<number | null>((res) => {
    child.on("exit", (code, signal) => {
      finished = true;
      res(code ?? (signal === null ? null : 128));
    });
    child.on("error", () => {
      finished = true;
      res(null);
    });
  });
  return { child, pid: child.pid, log, exited, done: () => finished };
}

/** Sends `sig` to `pid`; one that exited (and was reaped) since it was last seen is no error. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
  }
}

/** Stops a started process by its PID: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(p: Started, graceMs = 15_000): Promise<void> {
  if (p.done()) return;
  // It may have exited already with its exit event still to come.
  signal(p.pid, "SIGTERM");
  const timer = setTimeout(() => {
    if (!p.done()) signal(p.pid, "SIGKILL");
  }, graceMs);
  await p.exited;
  clearTimeout(timer);
}

/** Runs a command to completion; a failure names `step` and the log to read. */
export function run(cmd: string, args: readonly string[], step: string, log: string, timeoutMs = 60_000): Promise<string> {
  return new Promise((res, rej) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) rej(new Error(`runtimes: ${step} failed: ${stderr.trim() || err.message}; log: ${log}`));
      else res(stdout);
    });
  });
}

/** Runs a command to completion and resolves with its exit code (null: it did not exit by itself) and output. */
export function runForExit(cmd: string, args: readonly string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(cmd, args, { cwd: ROOT, timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : null;
      res({ code, stdout, stderr: code === null && err !== null ? `${stderr}${err.message}` : stderr });
    });
  });
}

/** The environment process `pid` started with (/proc/PID/environ), one `NAME=value` per entry. */
export function environment(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter((e) => e !== "");
}

/**
 * PIDs of processes whose command line mentions `dir` and that are not this process: what a
 * runtime started under its private directory (shims, conmon, launched plugins).
 */
export function processesUnder(dir: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue; // gone already
    }
    if (cmdline.includes(dir)) found.push({ pid, cmdline });
  }
  return found;
}

/** Mount points at or below `dir`, deepest first. */
export function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "")
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/**
 * Removes a runtime's private directory after its processes were stopped. Whatever is still
 * running or mounted there is a leak: it is killed by PID and unmounted, then reported.
 */
export async function removeWorkDir(dir: string): Promise<string[]> {
  const leaks: string[] = [];
  for (const p of processesUnder(dir)) {
    leaks.push(`process ${p.pid} (${p.cmdline.slice(0, 200)})`);
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
  for (const m of mountsUnder(dir)) {
    leaks.push(`mount ${m}`);
    try {
      execFileSync("umount", ["-l", m], { stdio: "ignore" });
    } catch {
      // reported already; rmSync below names what stays
    }
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  return leaks;
}

/** Whether an overlay filesystem mounts inside `dir` (containerd falls back to native otherwise). */
export function overlayWorks(dir: string): boolean {
  const base = mkdtempSync(join(dir, "ovl-"));
  const [lower, upper, work, merged] = ["l", "u", "w", "m"].map((d) => join(base, d));
  try {
    execFileSync("mkdir", ["-p", lower!, upper!, work!, merged!]);
    execFileSync("mount", ["-t", "overlay", "overlay", "-o", `lowerdir=${lower},upperdir=${upper},workdir=${work}`, merged!], { stdio: "ignore" });
    execFileSync("umount", [merged!]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

/** A TCP port nothing listens on now (the kernel's pick), on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => (typeof a === "object" && a !== null ? res(a.port) : rej(new Error("runtimes: no free port"))));
    });
  });
}
