/**
 * The plugin executable, in one of two forms:
 *
 * - `sea`: a Node single executable application (`node --build-sea`, Node 25.5 and later): the
 *   Node binary with the bundle and V8's code cache of it inside (or, as `seaStartup:
 *   "snapshot"`, a V8 startup snapshot taken with nri-wire's modules loaded). Nothing else on
 *   the host.
 * - `script`: the bundle itself behind a `#!` line naming a Node binary by absolute path (a
 *   runtime launches plugins with no PATH, so `#!/usr/bin/env node` would not start). Needs that
 *   Node on the host.
 */
import { execFile } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

/** The executable's form; see the module comment. */
export type ExecutableForm = "sea" | "script";

/** The forms, for help and checks. */
export const EXECUTABLE_FORMS: readonly ExecutableForm[] = ["sea", "script"];

/** What building an executable needs. */
export interface ExecutableSpec {
  readonly form: ExecutableForm;
  /** The Node binary embedded (sea) or named on the `#!` line (script); absolute. */
  readonly node: string;
  /** Node and V8 options the executable always starts with. */
  readonly nodeOptions: readonly string[];
  /** What a `sea` starts from; see {@link SeaStartup}. Default `code-cache`. */
  readonly seaStartup?: SeaStartup | undefined;
}

/**
 * What a single executable application starts from: `code-cache`, the bundle and V8's code cache
 * of it, compiled but not run at build time; `snapshot`, a V8 startup snapshot taken once
 * nri-wire's modules are loaded, which starts about 5 ms sooner but holds about 10 MiB more
 * memory under load (docs/deployment.md has the measurements).
 */
export type SeaStartup = "snapshot" | "code-cache";

function run(file: string, args: readonly string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    execFile(file, args, { cwd, maxBuffer: 16 << 20, timeout: 300_000 }, (err, stdout, stderr) => {
      if (err !== null) rej(new Error((stderr.trim().split("\n").at(-1) ?? "") || err.message, { cause: err }));
      else res({ stdout, stderr });
    });
  });
}

/** The version of a Node binary (`v26.1.0`); throws naming the binary when it does not run. */
export async function nodeVersion(node: string): Promise<string> {
  try {
    return (await run(node, ["--version"], "/")).stdout.trim();
  } catch (e) {
    throw new Error(`node ${node}: does not run: ${(e as Error).message}`, { cause: e });
  }
}

/** Whether a Node version has `--build-sea` (25.5 and later). */
export function canBuildSea(version: string): boolean {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (m === null) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 25 || (major === 25 && minor >= 5);
}

/** Writes the executable `out` from the bundle at `bundleFile`, working in `dir`. */
export async function writeExecutable(spec: ExecutableSpec, bundleFile: string, code: string, out: string, dir: string): Promise<void> {
  if (!isAbsolute(spec.node)) throw new Error(`node ${spec.node}: must be an absolute path`);
  if (spec.form === "script") {
    if (spec.nodeOptions.length > 1) throw new Error(`form script: takes at most one node option (a #! line passes one argument), got ${spec.nodeOptions.length}`);
    writeFileSync(out, `#!${[spec.node, ...spec.nodeOptions].join(" ")}\n${code}`);
    chmodSync(out, 0o755);
    return;
  }
  const version = await nodeVersion(spec.node);
  if (!canBuildSea(version)) throw new Error(`form sea: node ${version} (${spec.node}) cannot build a single executable application: it needs Node 25.5 or later (--node PATH)`);
  const snapshot = spec.seaStartup === "snapshot";
  const config = join(dir, "sea-config.json");
  writeFileSync(
    config,
    JSON.stringify({ main: bundleFile, output: out, disableExperimentalSEAWarning: true, useCodeCache: !snapshot, useSnapshot: snapshot, execArgv: spec.nodeOptions, execArgvExtension: "none" }),
  );
  try {
    // The snapshot or the code cache is made under the options the executable runs with: V8
    // rejects a code cache made under other flags (a `Code cache data rejected` warning and a
    // slower start).
    await run(spec.node, [...spec.nodeOptions, "--build-sea", config], dir);
  } catch (e) {
    throw new Error(`form sea: node --build-sea: ${(e as Error).message}`, { cause: e });
  }
  chmodSync(out, 0o755);
}
