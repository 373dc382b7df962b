/**
 * The pre-installed plugin executable, in one of two forms:
 *
 * - `sea`: a Node single executable application (`node --build-sea`, Node 25.5 and later): the
 *   engine's (stripped) binary with the bundle and V8's code cache of it inside (or, as
 *   `seaStartup: "snapshot"`, a V8 startup snapshot taken with nri-wire's modules loaded).
 *   Nothing else on the host. It is made by the engine of its own platform (through qemu-user
 *   for another architecture), as V8 accepts only a code cache its own build made.
 * - `script`: the bundle itself behind a `#!` line naming a Node binary by absolute path (a
 *   runtime launches plugins with no PATH, so `#!/usr/bin/env node` would not start). Needs that
 *   Node on the host.
 *
 * The same bundle and engine give the same bytes: the build works in a directory of its own
 * with relative names (the code cache records the script's path) and under a fixed
 * `--random-seed` (the code cache records string hashes, which otherwise differ at every build;
 * V8 leaves that flag out of the check of a cache's flags, so the executable accepts its cache
 * and still hashes with a random seed). The executable is not stripped after the payload is in:
 * `strip` cuts the segment the payload was added in (the result crashes), so the engine binary is
 * stripped before.
 */
import { execFile } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Engine } from "./engine.js";

/** The executable's form; see the module comment. */
export type ExecutableForm = "sea" | "script";

/** The forms, for help and checks. */
export const EXECUTABLE_FORMS: readonly ExecutableForm[] = ["sea", "script"];

/**
 * What a single executable application starts from: `code-cache`, the bundle and V8's code cache
 * of it, compiled but not run at build time; `snapshot`, a V8 startup snapshot taken once
 * nri-wire's modules are loaded, which starts 5–13 ms sooner but holds more memory (3 MiB more
 * idle anonymous memory, up to 10 MiB more RSS at the peak; docs/deployment.md has the runs).
 */
export type SeaStartup = "snapshot" | "code-cache";

/** The version an engine binary says it is (`v26.1.0`, `1.4.5`); throws naming the binary when it does not run. */
export function engineVersion(engine: string, binary: string): Promise<string> {
  return new Promise((res, rej) => {
    execFile(binary, ["--version"], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err === null) return res(stdout.trim());
      rej(new Error(`${engine} ${binary}: does not run: ${(stderr.trim().split("\n").at(-1) ?? "") || err.message}`, { cause: err }));
    });
  });
}

/** Whether a Node version has `--build-sea` (25.5 and later). */
export function canBuildSea(version: string): boolean {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (m === null) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 25 || (major === 25 && minor >= 5);
}

/** Writes `dir/name`, the script form: the bundle behind `#!node [option]` (at most one option: the build checks). */
export function writeScript(node: string, nodeOptions: readonly string[], code: string, dir: string, name: string): void {
  if (!isAbsolute(node)) throw new Error(`node ${node}: must be an absolute path`);
  const out = join(dir, name);
  writeFileSync(out, `#!${[node, ...nodeOptions].join(" ")}\n${code}`);
  chmodSync(out, 0o755);
}

/**
 * Writes `dir/name`, the sea form, from the bundle `code` with `engine`, working in `dir` (which
 * holds nothing else of this build's that the names below could meet).
 */
export async function writeSea(o: { engine: Engine; nodeOptions: readonly string[]; seaStartup?: SeaStartup | undefined; code: string; dir: string; name: string; timeoutMs: number }): Promise<void> {
  const snapshot = o.seaStartup === "snapshot";
  writeFileSync(join(o.dir, "main.cjs"), o.code);
  writeFileSync(
    join(o.dir, "sea-config.json"),
    JSON.stringify({
      main: "main.cjs",
      output: o.name,
      executable: o.engine.staged,
      disableExperimentalSEAWarning: true,
      useCodeCache: !snapshot,
      useSnapshot: snapshot,
      execArgv: o.nodeOptions,
      execArgvExtension: "none",
    }),
  );
  // The snapshot or the code cache is made under the options the executable runs with: V8
  // rejects a code cache made under other flags (a `Code cache data rejected` warning and a
  // slower start).
  const r = await o.engine.runner.run(o.engine.staged, [...o.nodeOptions, "--random-seed=1", "--build-sea", "sea-config.json"], { cwd: o.dir, env: {}, timeoutMs: o.timeoutMs });
  if (r.code !== 0) {
    const why = r.timedOut ? `did not finish in ${o.timeoutMs} ms` : (r.stderr.trim().split("\n").at(-1) ?? `exit code ${r.code}`);
    throw new Error(`form sea: node --build-sea: ${why}`);
  }
  chmodSync(join(o.dir, o.name), 0o755);
}
