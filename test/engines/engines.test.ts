import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { command, prerequisites } from "../support/prerequisites.js";
import { SLOW_START } from "../support/slow-start.js";
import { socketPath } from "../support/socket.js";
import { tempDir } from "../support/temp.js";

/*
 * nri-wire is one code base on Node, Bun and Deno. Each engine runs bundles of the library (the
 * form a Bun or Deno user deploys): a plugin, on fd 3 and on a socket, judged by the conformance
 * suite on Node; the conformance suite itself (the runtime side) judging a plugin on Node; and
 * TestRuntime with a plugin in-process.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** Bundles `entry` into one ESM file in `dir`, as a Bun or Deno user's build would. */
async function bundle(entry: string, dir: string): Promise<string> {
  const esbuild = await import("esbuild");
  const outfile = join(dir, `${entry.replace(/^.*\//u, "").replace(/\.ts$/u, "")}.mjs`);
  await esbuild.build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "es2022",
    outfile,
    tsconfig: join(ROOT, "tsconfig.json"),
    external: ["esbuild", "playwright-core", "prom-client", "@opentelemetry/*", "pino"],
    // Bundled CommonJS dependencies call require(): an ES module has none of its own.
    banner: { js: 'import { createRequire as __nriRequire } from "node:module"; const require = __nriRequire(import.meta.url);' },
    logLevel: "silent",
  });
  return outfile;
}

const bundles = { plugin: "", cli: "", testRuntime: "" };
beforeAll(async () => {
  const dir = tempDir();
  const [plugin, cli, testRuntime] = await Promise.all(["test/engines/fixtures/plugin.ts", "src/cli/main.ts", "test/engines/fixtures/test-runtime.ts"].map((e) => bundle(e, dir)));
  Object.assign(bundles, { plugin, cli, testRuntime });
});

/** How long one run of an engine may take: three dialects, each with cold starts of the plugin. */
const RUN_LIMIT_MS = 240_000;

/** `nri-wire test-plugin --json` run by `runtime` (an engine's command) on `plugin`; its report, failing with the checks that failed. */
async function conformance(runtime: readonly string[], args: readonly string[], plugin: readonly string[]): Promise<void> {
  const [cmd, ...pre] = runtime;
  const { stdout } = await run(cmd!, [...pre, bundles.cli, "test-plugin", "--json", ...SLOW_START, ...args, "--", ...plugin], { timeout: RUN_LIMIT_MS }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? "", stderr: e.stderr }));
  const report = JSON.parse(stdout) as { passed: boolean; dialects: { dialect: string; passed: boolean; stderr?: string; checks: { id: string; status: string; failures: { message: string }[] }[] }[] };
  const failed = report.dialects.flatMap((d) => d.checks.filter((c) => c.status === "fail").map((c) => `${d.dialect}/${c.id}: ${c.failures.map((f) => f.message).join("; ")}${d.stderr === undefined ? "" : ` (stderr: ${d.stderr})`}`));
  expect(failed).toEqual([]);
  expect(report.dialects.map((d) => [d.dialect, d.passed])).toEqual([
    ["v1beta1", true],
    ["v1alpha1", true],
    ["statechange", true],
  ]);
}

const ENGINES = [
  { name: "bun", label: "Bun", run: ["bun"] },
  { name: "deno", label: "Deno", run: ["deno", "run", "--allow-all"] },
] as const;

describe.each(ENGINES)("on $label", (engine) => {
  const gate = prerequisites("engines", `the ${engine.label} tests`, [command(engine.name, `${engine.label}, an engine nri-wire runs on; .ci/run puts its npm package on PATH`, ["--version"])]);
  const node = [process.execPath];

  it.runIf(gate.ok)("a pre-installed plugin, its connection on fd 3, passes the conformance suite of a Node runtime", async () => {
    await conformance(node, [], [...engine.run, bundles.plugin]);
  }, 300_000);

  it.runIf(gate.ok)("a plugin on a socket passes it too, reconnecting after the runtime restarts", async () => {
    const path = socketPath();
    await conformance(node, ["--socket", path], [...engine.run, bundles.plugin, "--socket", path]);
  }, 300_000);

  it.runIf(gate.ok)("the runtime side: the conformance suite runs there, and passes a plugin on Node on fd 3", async () => {
    await conformance(engine.run, [], [...node, bundles.plugin]);
  }, 300_000);

  it.runIf(gate.ok)("and passes a plugin on Node on a socket", async () => {
    const path = socketPath();
    await conformance(engine.run, ["--socket", path], [...node, bundles.plugin, "--socket", path]);
  }, 300_000);

  it.runIf(gate.ok)("TestRuntime runs there, with a plugin in-process, and the engine is told apart", async () => {
    const { stdout } = await run(engine.run[0], [...engine.run.slice(1), bundles.testRuntime], { timeout: RUN_LIMIT_MS });
    expect(JSON.parse(stdout)).toEqual({ engine: engine.name, env: ["ENGINE=checked"] });
  }, 300_000);
});
