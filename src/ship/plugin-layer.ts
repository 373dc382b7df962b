/**
 * The plugin layer of an image: what one plugin adds on top of its engine's layer. For Node:
 *
 *   /NN-NAME                                  the launcher: `#!/usr/local/bin/node` and a few lines
 *   /usr/local/lib/nri-wire/NN-NAME/plugin.cjs        the bundle
 *   /usr/local/lib/nri-wire/NN-NAME/plugin.cjs.cache  V8's code cache of it, for this engine
 *   /usr/local/lib/nri-wire/NN-NAME/probe.cjs         the probe mode alone, a few KiB
 *
 * Run as `NN-NAME probe` (the readiness probe, a process the kubelet starts every few seconds),
 * the launcher runs probe.cjs and reads neither the bundle nor its cache. Otherwise it compiles
 * the bundle with the code cache, as a single executable application does with the one inside
 * it, so the plugin starts without parsing or compiling what it ran at build time. The build makes the cache by running the bundle's `check` mode on the engine that
 * ships (through qemu-user for another architecture), under the options the plugin runs with (V8
 * rejects a cache made under other flags), plus two that V8 leaves out of that check: a fixed
 * `--random-seed` (it fixes the string hashes the cache records, which otherwise differ at every
 * build) and `--predictable` (one thread: otherwise how far the background compilers got during
 * the run shows in a few flag bits of the cache). The bundle is compiled under its path in the
 * image, never the build's directory, so the cache's bytes do not depend on where the build ran.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Engine } from "./engine.js";
import type { LayerSpec } from "./oci-image.js";
import type { RunResult } from "./platform-runner.js";

/** Where a plugin's files are in its image. */
export function pluginPaths(id: string): { launcher: string; bundle: string; codeCache: string; probe: string } {
  const dir = `/usr/local/lib/nri-wire/${id}`;
  return { launcher: `/${id}`, bundle: `${dir}/plugin.cjs`, codeCache: `${dir}/plugin.cjs.cache`, probe: `${dir}/probe.cjs` };
}

/** The flags the code cache is made under besides the plugin's own; see the module comment. */
const CACHE_BUILD_FLAGS: readonly string[] = ["--predictable", "--random-seed=1"];

const q = (s: string): string => JSON.stringify(s);

/**
 * The lines that compile the bundle, read from the JavaScript expression `files.bundle` (and its
 * cache from `files.cache`), as a function of the CommonJS variables, into `script`. Its name is
 * the bundle's path in the image wherever it is read from.
 */
function compileLines(id: string, files: { bundle: string; cache?: string }): string[] {
  return [
    `const { readFileSync } = require("node:fs");`,
    `const { join, dirname } = require("node:path");`,
    `const { Script, constants } = require("node:vm");`,
    `const filename = ${q(pluginPaths(id).bundle)};`,
    `let cachedData;`,
    ...(files.cache === undefined ? [] : [`try { cachedData = readFileSync(${files.cache}); } catch {}`]),
    `const source = "(function (exports, require, module, __filename, __dirname) {\\n" + readFileSync(${files.bundle}, "utf8") + "\\n})";`,
    `const script = new Script(source, { filename, lineOffset: -1, cachedData, importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });`,
    `const pluginModule = { exports: {} };`,
  ];
}

const RUN_LINE = `script.runInThisContext()(pluginModule.exports, require, pluginModule, filename, dirname(filename));`;

/** The launcher at /NN-NAME; see the module comment. */
export function launcherSource(id: string, engine: Pick<Engine, "path">): string {
  return [
    `#!${engine.path}`,
    `"use strict";`,
    `// ${id}, built by nri-wire build: runs its bundle with the V8 code cache made for this engine.`,
    // The image's root is this file's directory (an unpacked copy of the image works too).
    `if (process.argv[2] === "probe") require(require("node:path").join(__dirname, ${q(pluginPaths(id).probe)}));`,
    `else {`,
    ...compileLines(id, { bundle: `join(__dirname, ${q(pluginPaths(id).bundle)})`, cache: `join(__dirname, ${q(pluginPaths(id).codeCache)})` }),
    `if (script.cachedDataRejected === true) process.stderr.write(${q(`${id}: code cache rejected by node `)} + process.version + ": starting without it\\n");`,
    RUN_LINE,
    `}`,
    "",
  ].join("\n");
}

/** What making the plugin layer found: the check's result and the layer. */
export interface PluginLayer {
  /** The `check` run on the engine: its output is the plugin's events, or the entry's problem. */
  readonly check: RunResult;
  /** The layer; undefined when the check failed. */
  readonly layer: LayerSpec | undefined;
}

/**
 * Runs the bundle's `check` mode on `engine` (with `nodeOptions`) in `dir`, making the code
 * cache as it does, and makes the plugin layer from the bundle, the cache, the probe's bundle
 * (`probeCode`, from probeBundle) and the launcher.
 */
export async function makePluginLayer(o: { id: string; engine: Engine; code: string; probeCode: string; nodeOptions: readonly string[]; dir: string; timeoutMs: number }): Promise<PluginLayer> {
  const p = pluginPaths(o.id);
  const cacheFile = join(o.dir, "plugin.cjs.cache");
  const maker = join(o.dir, "make-code-cache.cjs");
  writeFileSync(join(o.dir, "plugin.cjs"), o.code);
  writeFileSync(
    maker,
    [
      `"use strict";`,
      `// Made and run by nri-wire build: compiles the bundle as the launcher does, runs it, and writes V8's code cache of what ran.`,
      ...compileLines(o.id, { bundle: q(join(o.dir, "plugin.cjs")) }),
      `process.on("exit", () => require("node:fs").writeFileSync(${q(cacheFile)}, script.createCachedData()));`,
      RUN_LINE,
      "",
    ].join("\n"),
  );
  const check = await o.engine.runner.run(o.engine.staged, [...o.nodeOptions, ...CACHE_BUILD_FLAGS, maker, "check"], { cwd: o.dir, env: {}, timeoutMs: o.timeoutMs });
  if (check.code !== 0) return { check, layer: undefined };
  return {
    check,
    layer: {
      files: [
        { path: p.launcher, source: Buffer.from(launcherSource(o.id, o.engine)), mode: 0o755 },
        { path: p.bundle, source: Buffer.from(o.code), mode: 0o644 },
        { path: p.codeCache, source: readFileSync(cacheFile), mode: 0o644 },
        { path: p.probe, source: Buffer.from(o.probeCode), mode: 0o644 },
      ],
      createdBy: `nri-wire build: plugin ${o.id}, its bundle and V8's code cache of it for ${o.engine.name} ${o.engine.version}`,
    },
  };
}
