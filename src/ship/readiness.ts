/**
 * Readiness that means "registered": the running plugin keeps a state file in a pod-local
 * directory while the runtime has it configured and synchronized, and removes it when the
 * connection ends. `NN-NAME probe` (the readiness probe; the image has no shell) checks that the
 * file exists and that the process it names is the one running, not a predecessor whose file
 * survived a container restart.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What the state file holds. */
export interface RegisteredState {
  readonly pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat field 22). */
  readonly started: string;
  /** `runtime version`, as its Configure said. */
  readonly runtime: string;
}

/** The state file in `dir` (a directory of the plugin's own: one plugin per pod). */
export function stateFile(dir: string): string {
  return join(dir, "registered");
}

/** The start time of process `pid`, or undefined when there is none. */
export function processStart(pid: number | "self"): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Records that this process is registered (written whole: a probe never reads half a file). */
export function markRegistered(file: string, runtime: string): void {
  const state: RegisteredState = { pid: process.pid, started: processStart("self") ?? "", runtime };
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** Records that this process is not registered (any more). */
export function markUnregistered(file: string): void {
  rmSync(file, { force: true });
}

/**
 * The readiness verdict: the line to print and whether the plugin is registered. Not registered:
 * no state file, or one left by a process that is gone.
 */
export function probe(file: string): { ready: boolean; line: string } {
  let state: RegisteredState;
  try {
    state = JSON.parse(readFileSync(file, "utf8")) as RegisteredState;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ready: false, line: code === "ENOENT" ? `not registered: no state file ${file}` : `not registered: state file ${file}: ${code ?? (e as Error).message}` };
  }
  const started = processStart(state.pid);
  if (started === undefined || started !== state.started) return { ready: false, line: `not registered: state file ${file} names process ${state.pid}, which is gone` };
  return { ready: true, line: `registered with ${state.runtime} (pid ${state.pid})` };
}
