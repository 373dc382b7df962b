import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ESBUILD_RANGE } from "../../src/ship/bundle.js";
import { tempDir } from "../support/temp.js";

/*
 * The package as a user installs it: packed, then installed with --omit=dev into an empty
 * project (from the npm cache where it can: the repository's own install filled it with the
 * tarballs and the short package documents a lockfile install reads, and an install of a tarball
 * asks for the full ones, which a fresh machine's cache lacks). A plugin or a
 * runtime gets nri-wire and its one peer, @bufbuild/protobuf; no bundler. `build` says what to
 * install instead of failing on a missing module.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const dir = tempDir("nriw-install-");

const npm = (args: string[], cwd: string): string => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
/** npm's warnings and errors of a command (it exits 0 with warnings). */
const npmWarnings = (args: string[], cwd: string): string[] => {
  const r = spawnSync("npm", args, { cwd, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr.split("\n").filter((l) => /^npm (warn|error)/iu.test(l));
};

describe("npm install nri-wire --omit=dev", () => {
  it("has no dependencies of its own: @bufbuild/protobuf is a peer; esbuild (at the range build names), prom-client and OpenTelemetry's API, SDK and exporter optional peers", () => {
    expect(pkg.dependencies).toBeUndefined();
    const optional = ["@opentelemetry/api", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources", "@opentelemetry/sdk-trace", "esbuild", "prom-client"];
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(["@bufbuild/protobuf", ...optional].sort());
    expect(pkg.peerDependenciesMeta).toEqual(Object.fromEntries(optional.map((n) => [n, { optional: true }])));
    expect(pkg.peerDependencies.esbuild).toBe(ESBUILD_RANGE);
  });

  it("installs nri-wire and @bufbuild/protobuf alone; a plugin and a runtime load; build names what to install", () => {
    // Packing runs the package's prepare script: dist/ is built from this tree.
    const packed = npm(["pack", "--silent", "--pack-destination", dir], ROOT).trim().split("\n").at(-1)!;
    const project = join(dir, "project");
    execFileSync("mkdir", ["-p", project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }));
    // No warning: no install script (dist/ is built when packing), no peer missing.
    expect(npmWarnings(["install", "--prefer-offline", "--omit=dev", "--no-audit", "--no-fund", join(dir, packed)], project)).toEqual([]);
    const installed = npm(["ls", "--all", "--omit=dev", "--parseable"], project)
      .trim()
      .split("\n")
      .slice(1)
      .map((p) => p.slice(join(project, "node_modules").length + 1))
      .sort();
    expect(installed).toEqual(["@bufbuild/protobuf", "nri-wire"]);
    expect(readdirSync(join(project, "node_modules")).sort()).toEqual([".bin", ".package-lock.json", "@bufbuild", "nri-wire"]);

    writeFileSync(
      join(project, "main.js"),
      [
        'import { NriPlugin, AdjustmentBuilder } from "nri-wire/plugin";',
        'import { NriRuntime } from "nri-wire/runtime";',
        'const p = new NriPlugin({ createContainer: () => ({ adjust: new AdjustmentBuilder().addEnv("A", "1").build() }) }, { name: "p", idx: "10" });',
        'const r = new NriRuntime({ name: "r", version: "1", socketPath: false });',
        "console.log(p.id, typeof r.start);",
        // Metrics and traces asked for without their peers: one line each, and the runtime runs.
        'const o = new NriRuntime({ name: "o", version: "1", socketPath: false, pluginPath: "/nonexistent", prometheus: true, tracing: true, log: { error: (m) => console.log(m) } });',
        "await o.start(); await o.runPodSandbox({ pod: { id: 'p' } }); await o.stop(); console.log('served');",
      ].join("\n"),
    );
    expect(execFileSync(process.execPath, ["main.js"], { cwd: project, encoding: "utf8" })).toBe(
      [
        "10-p function",
        "nri: runtime o: traces need @opentelemetry/api, an optional peer dependency of nri-wire that is not installed: npm install @opentelemetry/api; going on without them",
        "nri: runtime o: prometheus metrics need prom-client, an optional peer dependency of nri-wire that is not installed: npm install prom-client; going on without them",
        "served",
        "",
      ].join("\n"),
    );

    const cli = join(project, "node_modules/nri-wire/dist/src/cli/main.js");
    const build = spawnSync(process.execPath, [cli, "build", "main.js", "--name", "p", "--idx", "10", "--out", "out"], { cwd: project, encoding: "utf8" });
    expect([build.status, build.stderr]).toEqual([1, `build: esbuild is not installed: it is an optional peer dependency of nri-wire, needed only to build: npm install --save-dev esbuild@${ESBUILD_RANGE}\n`]);
    expect(readdirSync(project)).not.toContain("out");
  }, 300_000);
});
