/**
 * Bundling: one CommonJS file holding the entry, nri-wire and the plugin's main module, for a single
 * executable application (whose main script is CommonJS) or a `#!` script. esbuild does the work;
 * a bundle has no files beside it, so `createRequire(import.meta.url)` becomes require().
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BundleError } from "./errors.js";
import type { BakedIdentity } from "./probe-main.js";

/** This module's folder and the extension its siblings have (.ts from source, .js built). */
function here(): { dir: string; ext: string } {
  const file = fileURLToPath(import.meta.url);
  return { dir: dirname(file), ext: extname(file) };
}

/** The module the bundle's main module imports first: it ends a probe before anything else runs. */
const PROBE_FIRST = "nri-wire:probe-first";

/**
 * The source of {@link PROBE_FIRST}: in probe mode (`NN-NAME probe ...`) it runs probe-main and
 * exits, before the bundle evaluates the modules that serve the protocol or imports the entry, so
 * a readiness probe, a process the kubelet starts every few seconds, does no more than read the
 * state file (a startup snapshot's bundle evaluates it when the snapshot is built, where there is
 * no probe; its processes take the same path through plugin-main, already deserialized). Bundled
 * alone, it is also the probe script of an image (probeBundle).
 */
function probeFirstSource(baked: BakedIdentity): string {
  const { dir, ext } = here();
  const q = JSON.stringify;
  return [
    `import { probeMain } from ${q(join(dir, `probe-main${ext}`))};`,
    `if (process.argv[2] === "probe") process.exit(probeMain(${q(baked)}, process.argv.slice(3)));`,
  ].join("\n");
}

/**
 * The source of the bundle's main module: plugin-main, and a main function that runs it with
 * the entry's import (plugin-main reports an entry that fails to load), after
 * {@link PROBE_FIRST}. The entry is imported when the main function runs (a dynamic import,
 * which the bundle defers), so its top-level code runs in each process, with that process's
 * environment, in every form. Only a bundle that is also the main script of a startup snapshot
 * build loads `node:v8`, to hand the snapshot its main function: building the snapshot runs this
 * module, so nri-wire's modules and the built-in modules they need are loaded once, at build
 * time. Every other form leaves `node:v8` unloaded (with what it loads in turn, 2–4 ms of a
 * plugin's start and 0.4 MiB of its heap).
 */
function mainSource(entry: string, baked: BakedIdentity, startupSnapshot: boolean): string {
  const { dir, ext } = here();
  const q = JSON.stringify;
  const lines = [
    `import ${q(PROBE_FIRST)};`,
    `import { pluginMain } from ${q(join(dir, `plugin-main${ext}`))};`,
    `const main = () => pluginMain(() => import(${q(entry)}), ${q(baked)}).then((code) => process.exit(code), (e) => { process.stderr.write(String(e && e.stack || e) + "\\n"); process.exit(1); });`,
  ];
  if (!startupSnapshot) return [...lines, "main();"].join("\n");
  return [
    `import { startupSnapshot } from "node:v8";`,
    ...lines,
    `if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(main); else main();`,
  ].join("\n");
}

/** How every bundle is made: one minified CommonJS file for Node 22 and later, returned rather than written. */
const COMMON_OPTIONS = { bundle: true, platform: "node", format: "cjs", target: "node22", minify: true, legalComments: "none", write: false, logLevel: "silent" } as const;

/** The esbuild releases `build` bundles with: package.json's optional peer range (a test keeps them equal). */
export const ESBUILD_RANGE = "^0.28.2";

/**
 * esbuild, which only `build` needs: an optional peer dependency, so installing nri-wire for a
 * plugin or a runtime brings no bundler. Missing, it is one line saying what to install.
 */
export async function loadEsbuild(): Promise<typeof import("esbuild")> {
  try {
    return await import("esbuild");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND" || !String((e as Error).message).includes("'esbuild'")) throw e;
    throw new BundleError(`build: esbuild is not installed: it is an optional peer dependency of nri-wire, needed only to build: npm install --save-dev esbuild@${ESBUILD_RANGE}`, { cause: e });
  }
}

/** Where {@link bundle} runs from, and what it leaves out. */
export interface BundleOptions {
  /** The directory recorded paths are relative to (default: the entry's). */
  readonly workingDir?: string;
  /** Packages left out of the bundle. */
  readonly leaveOut?: readonly string[];
  /** Whether the bundle is also the main script of a startup snapshot build (default false). */
  readonly startupSnapshot?: boolean;
}

/**
 * The probe mode alone (probe-main and what it imports) as CommonJS source text, for an image's
 * launcher to run in a probe instead of the plugin's bundle: a probe then reads neither the bundle
 * nor its code cache (plugin-layer.ts).
 */
export async function probeBundle(baked: BakedIdentity): Promise<string> {
  const esbuild = await loadEsbuild();
  const result = await esbuild.build({
    stdin: { contents: probeFirstSource(baked), resolveDir: here().dir, sourcefile: "nri-wire-probe.js", loader: "js" },
    ...COMMON_OPTIONS,
    absWorkingDir: here().dir,
  });
  return result.outputFiles?.[0]?.text ?? "";
}

/**
 * Bundles `entry` with plugin-main into CommonJS source text. Paths the bundler records (its
 * inputs, and any module names it writes into the code) are relative to `workingDir` (the build
 * gives the entry's package; default the entry's directory): the bundle does not depend on where
 * the build runs. The optional peers a built plugin can use (prom-client, the OpenTelemetry SDK)
 * are taken in when the project has them installed; `leaveOut` names packages to leave out as if
 * it had not.
 */
export async function bundle(entry: string, baked: BakedIdentity, options: BundleOptions = {}): Promise<{ code: string; inputs: string[]; workingDir: string }> {
  const workingDir = options.workingDir ?? dirname(resolve(entry));
  const esbuild = await loadEsbuild();
  let result: Awaited<ReturnType<typeof esbuild.build>>;
  try {
    result = await esbuild.build({
      stdin: { contents: mainSource(resolve(entry), baked, options.startupSnapshot ?? false), resolveDir: dirname(resolve(entry)), sourcefile: "nri-wire-main.js", loader: "js" },
      ...COMMON_OPTIONS,
      external: [...(options.leaveOut ?? [])],
      absWorkingDir: workingDir,
      metafile: true,
      plugins: [
        {
          name: PROBE_FIRST,
          setup(b) {
            b.onResolve({ filter: /^nri-wire:probe-first$/ }, () => ({ path: PROBE_FIRST, namespace: "nri-wire" }));
            b.onLoad({ filter: /.*/, namespace: "nri-wire" }, () => ({ contents: probeFirstSource(baked), resolveDir: here().dir, loader: "js" }));
          },
        },
        {
          name: "nri-wire-require",
          setup(b) {
            b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
              if (args.path.includes("node_modules") || !existsSync(args.path)) return undefined;
              const text = readFileSync(args.path, "utf8");
              if (!text.includes("createRequire(import.meta.url)(")) return undefined;
              const loader = args.path.endsWith("ts") ? "ts" : "js";
              return { contents: text.replaceAll("createRequire(import.meta.url)(", "require("), loader };
            });
          },
        },
      ],
    });
  } catch (e) {
    const first = (e as { errors?: { text: string; location?: { file: string; line: number; column: number } | null }[] }).errors?.[0];
    if (first === undefined) throw e;
    const at = first.location == null ? "" : ` (${resolve(first.location.file)}:${first.location.line}:${first.location.column})`;
    throw new BundleError(`${first.text}${at}`, { cause: e });
  }
  const code = result.outputFiles?.[0]?.text ?? "";
  return { code, inputs: Object.keys(result.metafile?.inputs ?? {}), workingDir };
}
