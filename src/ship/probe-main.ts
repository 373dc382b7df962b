/**
 * The `probe` mode of a built plugin (`NN-NAME probe [--state DIR]`: the readiness probe, which the
 * kubelet runs as a new process every few seconds) and how the executable's lines begin. A probe
 * reads the state file (readiness.ts) and nothing else: it neither loads the entry (whose
 * top-level code is the plugin's, run only by the plugin) nor the modules that serve the
 * protocol, and it writes its one line straight to fd 2 (`process.stderr` on a pipe, as the
 * kubelet gives it, would load Node's net and stream modules for it). The bundle evaluates this
 * module first and ends the process here in probe mode (bundle.ts), so a probe costs an engine's
 * start and little more.
 */
import { writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { probe, stateFile } from "./readiness.js";

/** What `nri-wire build` fixes at build time. */
export interface BakedIdentity {
  readonly name: string;
  readonly idx: string;
}

/** The state directory a probe reads when none is given. */
const DEFAULT_STATE_DIR = "/run/nri-wire";

/** `NN-NAME`, the start of every line the executable writes: the identity given, else the one baked in. */
export function lineId(baked: BakedIdentity, env: NodeJS.ProcessEnv): string {
  return `${env.NRI_PLUGIN_IDX ?? baked.idx}-${env.NRI_PLUGIN_NAME ?? baked.name}`;
}

/** Writes `text` to fd 2 at once (a line is shorter than a pipe's atomic write), through `process.stderr` if that fails. */
function writeStderrSync(text: string): void {
  try {
    writeSync(2, text);
  } catch {
    process.stderr.write(text);
  }
}

/** The line for a failure of the executable: a command line parseArgs refused, or the error's message. */
export function failureLine(e: unknown): string {
  const bad = ((e as NodeJS.ErrnoException).code ?? "").startsWith("ERR_PARSE_ARGS");
  return bad ? `bad command line: ${(e as Error).message}` : (e as Error).message;
}

/**
 * Runs the probe mode with `argv` (after `probe`); returns the exit code: 0 when the running
 * plugin is registered. Its line goes to `write` (default fd 2 directly).
 */
export function probeMain(baked: BakedIdentity, argv: readonly string[], env: NodeJS.ProcessEnv = process.env, write: (text: string) => void = writeStderrSync): number {
  const id = lineId(baked, env);
  const say = (line: string): void => write(`${id}: ${line}\n`);
  try {
    const { values } = parseArgs({ args: [...argv], options: { state: { type: "string", default: DEFAULT_STATE_DIR } }, strict: true });
    const verdict = probe(stateFile(values.state));
    say(verdict.line);
    return verdict.ready ? 0 : 1;
  } catch (e) {
    say(failureLine(e));
    return 1;
  }
}
