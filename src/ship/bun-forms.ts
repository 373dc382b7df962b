/**
 * What `nri-wire build --engine bun` makes of the bundle, beside the image's engine layer (Bun's
 * binary, engine.ts):
 *
 * - the executable: `bun build --compile --bytecode`, Bun's binary for the platform with the
 *   bundle and JavaScriptCore's bytecode of it appended. Bun cross-compiles: the host's Bun of the
 *   same version writes every platform's executable from that platform's binary.
 * - the plugin layer of the image:
 *
 *     /NN-NAME                                      the launcher: `#!/usr/local/bin/bun`, one line
 *     /usr/local/lib/nri-wire/NN-NAME/plugin.js     the bundle, as `bun build --bytecode` wrote it
 *     /usr/local/lib/nri-wire/NN-NAME/plugin.js.jsc its bytecode, which Bun reads beside it
 *
 * The bytecode depends on Bun's version, not the architecture, so the host's Bun makes it once
 * for every platform; each platform's own Bun then runs the bundle's `check` (through qemu-user
 * for another architecture), so the entry is known to load where it ships. The same bundle and
 * Bun version give the same bytes.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Engine } from "./engine.js";
import type { LayerSpec } from "./oci-image.js";
import { ARCHITECTURES, hostPlatform, type Platform } from "./platform.js";
import type { PluginLayer } from "./plugin-layer.js";
import { platformRunner, type RunResult } from "./platform-runner.js";

/** Where a Bun plugin's files are in its image. */
export function bunPluginPaths(id: string): { launcher: string; bundle: string; bytecode: string } {
  const dir = `/usr/local/lib/nri-wire/${id}`;
  return { launcher: `/${id}`, bundle: `${dir}/plugin.js`, bytecode: `${dir}/plugin.js.jsc` };
}

/** The launcher at /NN-NAME: requires the bundle from the image's root (an unpacked copy of the image works too). */
export function bunLauncherSource(id: string, engine: Pick<Engine, "path">): string {
  return [`#!${engine.path}`, `require(require("node:path").join(__dirname, ${JSON.stringify(bunPluginPaths(id).bundle)}));`, ""].join("\n");
}

/** Runs the host's Bun (`bun build ...`) in `dir`; throws with its last line of error. */
async function bunBuild(hostBun: string, args: readonly string[], dir: string, timeoutMs: number): Promise<void> {
  const r = await platformRunner(hostPlatform()).run(hostBun, ["build", ...args], { cwd: dir, env: {}, timeoutMs });
  if (r.code !== 0) {
    const why = r.timedOut ? `did not finish in ${timeoutMs} ms` : (r.stderr.trim().split("\n").at(-1) ?? `exit code ${r.code}`);
    throw new Error(`bun build: ${why}`);
  }
}

/**
 * Writes the bundle `code` with its bytecode into `dir` (plugin.js, plugin.js.jsc), made by the
 * host's Bun, and returns them: the same for every platform.
 */
export async function bunBytecode(o: { hostBun: string; code: string; dir: string; timeoutMs: number }): Promise<{ bundle: string; bytecode: string }> {
  writeFileSync(join(o.dir, "main.cjs"), o.code);
  await bunBuild(o.hostBun, ["--bytecode", "--format=cjs", "--target=bun", "--outdir=out", "main.cjs"], o.dir, o.timeoutMs);
  return { bundle: join(o.dir, "out/main.js"), bytecode: join(o.dir, "out/main.js.jsc") };
}

/** Runs the bundle's `check` on `engine` and, when it passes, makes the plugin layer. */
export async function makeBunPluginLayer(o: { id: string; engine: Engine; made: { bundle: string; bytecode: string }; dir: string; timeoutMs: number }): Promise<PluginLayer> {
  const check: RunResult = await o.engine.runner.run(o.engine.staged, [o.made.bundle, "check"], { cwd: o.dir, env: {}, timeoutMs: o.timeoutMs });
  if (check.code !== 0) return { check, layer: undefined };
  const p = bunPluginPaths(o.id);
  const layer: LayerSpec = {
    files: [
      { path: p.launcher, source: Buffer.from(bunLauncherSource(o.id, o.engine)), mode: 0o755 },
      { path: p.bundle, source: readFileSync(o.made.bundle), mode: 0o644 },
      { path: p.bytecode, source: readFileSync(o.made.bytecode), mode: 0o644 },
    ],
    createdBy: `nri-wire build: plugin ${o.id}, its bundle and JavaScriptCore's bytecode of it for ${o.engine.name} ${o.engine.version}`,
  };
  return { check, layer };
}

/** Bun's compile target for a platform (`bun-linux-arm64`). */
export function bunTarget(p: Platform): string {
  return `bun-linux-${ARCHITECTURES[p.architecture].node}`;
}

/**
 * Writes `dir/name`, the executable for `engine`'s platform: the bundle compiled by the host's
 * Bun onto that platform's (stripped) binary, starting with `execArgv`. A `.env` or `bunfig.toml`
 * where the runtime starts it is not read: a plugin's settings are its flags and environment.
 */
export async function writeBunExecutable(o: { hostBun: string; engine: Engine; execArgv: readonly string[]; code: string; dir: string; name: string; timeoutMs: number }): Promise<void> {
  writeFileSync(join(o.dir, "main.cjs"), o.code);
  await bunBuild(
    o.hostBun,
    [
      "--compile",
      "--bytecode",
      "--format=cjs",
      `--target=${bunTarget(o.engine.platform)}`,
      `--compile-executable-path=${o.engine.staged}`,
      ...(o.execArgv.length === 0 ? [] : [`--compile-exec-argv=${o.execArgv.join(" ")}`]),
      "--no-compile-autoload-dotenv",
      "--no-compile-autoload-bunfig",
      `--outfile=${o.name}`,
      "main.cjs",
    ],
    o.dir,
    o.timeoutMs,
  );
  chmodSync(join(o.dir, o.name), 0o755);
}
