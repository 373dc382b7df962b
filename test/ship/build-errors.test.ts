import { chmodSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { main } from "../../src/cli/main.js";
import { type BuildOptions, buildPlugin, checkRepository, defaultRepository, sourceDateEpoch } from "../../src/ship/build.js";
import type { BuildEngine } from "../../src/ship/engine-registry.js";
import { canBuildSea } from "../../src/ship/executable.js";
import { LOW_FOOTPRINT_OPTIONS } from "../../src/ship/footprint.js";
import { hostPlatform, type Platform } from "../../src/ship/platform.js";
import { notRoot, prerequisites } from "../support/prerequisites.js";
import { tempDir } from "../support/temp.js";

// Root writes into a directory of mode 0555 all the same.
const unwritable = prerequisites("ship", "the check of an output directory that cannot be written", [notRoot]);

const FIXTURES = resolve(import.meta.dirname, "fixtures");
function tmp(): string {
  return tempDir("nriw-ship-");
}

/** The build's error for these options, and what it left in the output directory. */
async function failure(o: Partial<BuildOptions> & { entry: string }): Promise<{ message: string; left: string[] }> {
  const out = o.out ?? tmp();
  try {
    await buildPlugin({ name: "adjuster", idx: "10", out, ...o });
  } catch (e) {
    return { message: (e as Error).message, left: existsSync(out) ? readdirSync(out) : [] };
  }
  throw new Error("the build did not fail");
}

describe("nri-wire build: bad input", () => {
  it("an invalid index or name is refused before anything is written", async () => {
    expect(await failure({ entry: join(FIXTURES, "adjuster.ts"), idx: "7" })).toEqual({ message: 'build: index "7" must be two digits 00-99', left: [] });
    expect(await failure({ entry: join(FIXTURES, "adjuster.ts"), idx: "1a" })).toEqual({ message: 'build: index "1a" must be two digits 00-99', left: [] });
    expect(await failure({ entry: join(FIXTURES, "adjuster.ts"), name: "my/plugin" })).toEqual({ message: `build: invalid plugin name "my/plugin": contains invalid character '/'`, left: [] });
    expect(await failure({ entry: join(FIXTURES, "adjuster.ts"), name: "" })).toEqual({ message: "build: invalid plugin name: name is empty", left: [] });
  });

  it("a missing entry is named", async () => {
    expect(await failure({ entry: "no-such-entry.ts" })).toEqual({ message: 'build: entry "no-such-entry.ts": not found', left: [] });
  });

  it("an entry that exports no plugin, or not one, is refused naming the problem, and nothing is left behind", async () => {
    const entry = join(FIXTURES, "no-export.ts");
    expect(await failure({ entry })).toEqual({
      message: `build: entry "${entry}": exports no plugin: its default export must be an object of plugin handlers (such as createContainer)`,
      left: [],
    });
    const typo = join(FIXTURES, "typo.ts");
    const t = await failure({ entry: typo });
    expect(t.message).toBe(`build: entry "${typo}": default export: unknown handler "createContainr": did you mean "createContainer"?`);
    expect(t.left).toEqual([]);
  }, 60_000);

  it("an entry whose top-level code throws is refused with the error, and nothing is left behind", async () => {
    const entry = join(FIXTURES, "throws.ts");
    expect(await failure({ entry })).toEqual({ message: `build: entry "${entry}": cannot load the entry: configuration missing`, left: [] });
  }, 60_000);

  it("an entry that does not bundle is refused with esbuild's reason", async () => {
    const entry = join(FIXTURES, "unresolved.ts");
    expect(await failure({ entry })).toEqual({ message: `build: entry "${entry}": bundle: Could not resolve "./no-such-module.js" (${entry}:3:21)`, left: [] });
  }, 60_000);

  it("an output directory that cannot be created is named", async () => {
    const file = join(tmp(), "a-file");
    writeFileSync(file, "");
    expect((await failure({ entry: join(FIXTURES, "adjuster.ts"), out: join(file, "out") })).message).toBe(`build: output directory "${resolve(file, "out")}": cannot create: ENOTDIR`);
  });

  it.skipIf(!unwritable.ok)("an output directory that cannot be written is named", async () => {
    const ro = tmp();
    chmodSync(ro, 0o555);
    expect((await failure({ entry: join(FIXTURES, "adjuster.ts"), out: ro })).message).toBe(`build: output directory "${ro}": not writable: EACCES`);
  });

  it("a Node too old to build a single executable application is named, and nothing is left behind", async () => {
    const old = tmp();
    const fake = join(old, "node");
    writeFileSync(fake, `#!${process.execPath}\nif (process.argv[2] === "--version") console.log("v24.1.0"); else require("node:child_process").execFileSync(${JSON.stringify(process.execPath)}, process.argv.slice(2), { stdio: "inherit" });\n`);
    chmodSync(fake, 0o755);
    expect(await failure({ entry: join(FIXTURES, "adjuster.ts"), node: fake })).toEqual({
      message: `build: form sea: node v24.1.0 (${fake}) cannot build a single executable application: it needs Node 25.5 or later (--node PATH or VERSION)`,
      left: [],
    });
  }, 60_000);

  it("an engine it does not build for, another engine's options, or a Bun too old are refused in one line, and nothing is left behind", async () => {
    const entry = join(FIXTURES, "adjuster.ts");
    expect(await failure({ entry, engine: "deno" as BuildEngine })).toEqual({ message: 'build: engine "deno": nri-wire builds plugins for node or bun', left: [] });
    expect(await failure({ entry, engine: "bun", form: "script" })).toEqual({ message: "build: form script: engine bun builds the single executable form only", left: [] });
    expect(await failure({ entry, engine: "bun", node: "26" })).toEqual({ message: "build: --node chooses Node's version: with engine bun, --bun does", left: [] });
    expect(await failure({ entry, engine: "bun", nodeOptions: ["--max-semi-space-size=1"] })).toEqual({ message: "build: --node-options are Node's: engine bun starts with Bun's defaults", left: [] });
    expect(await failure({ entry, engine: "bun", seaStartup: "snapshot" })).toEqual({ message: "build: a startup snapshot is Node's: engine bun starts from its bytecode", left: [] });
    expect(await failure({ entry, bun: "1.4.5" })).toEqual({ message: "build: --bun chooses Bun's version: give --engine bun", left: [] });
    expect(await failure({ entry, form: "script", nodeOptions: [...LOW_FOOTPRINT_OPTIONS] })).toEqual({
      message: "build: form script: takes at most one node option (a #! line passes one argument), got 3",
      left: [],
    });
    expect(await failure({ entry, engine: "bun", bun: "1.3.9" })).toEqual({ message: "build: engine bun 1.3.9: nri-wire runs on Bun 1.4 or later", left: [] });
    expect(await failure({ entry, engine: "bun", bun: "bun" })).toEqual({ message: "build: bun bun: must be an absolute path or a version", left: [] });
    const lines: string[] = [];
    const code = await main(["build", entry, "--name", "adjuster", "--idx", "10", "--out", join(tmp(), "out"), "--engine", "deno"], COMMANDS, () => undefined, (l) => lines.push(l));
    expect({ code, first: lines[0]!.split("\n")[0] }).toEqual({ code: 2, first: 'nri-wire build: --engine must be node or bun, not "deno"' });
  });

  it("a repository that is not fully qualified is refused: both runtimes must resolve the name alike", async () => {
    expect(await failure({ entry: join(FIXTURES, "adjuster.ts"), repository: "nri-wire/adjuster" })).toEqual({
      message: 'build: repository "nri-wire/adjuster": not a fully qualified repository name (REGISTRY/PATH in lowercase, such as localhost/nri-wire/adjuster or ghcr.io/acme/adjuster)',
      left: [],
    });
    for (const bad of ["adjuster", "localhost/Adjuster", "localhost/a//b", "ghcr.io/acme/adjuster:1.0", "https://ghcr.io/acme/x", "registry:5000:6000/x", "registry/x"]) expect(() => checkRepository(bad)).toThrow(`build: repository "${bad}": not a fully qualified`);
    for (const good of ["localhost/nri-wire/adjuster", "localhost:5000/a/b", "registry.example.com/team/my_plugin", "ghcr.io/acme/adjuster-v2", "127.0.0.1:5000/x", "registry:5000/x"]) expect(() => checkRepository(good)).not.toThrow();
    expect(defaultRepository("My_Plugin+v2")).toBe("localhost/nri-wire/my_plugin-v2");
    expect(() => checkRepository(defaultRepository("__x..y__"))).not.toThrow();
  });

  it("SOURCE_DATE_EPOCH must be a number of seconds", () => {
    expect(sourceDateEpoch({})).toBe(0);
    expect(sourceDateEpoch({ SOURCE_DATE_EPOCH: "1700000000" })).toBe(1_700_000_000);
    expect(() => sourceDateEpoch({ SOURCE_DATE_EPOCH: "yesterday" })).toThrow('build: SOURCE_DATE_EPOCH "yesterday": not a number of seconds since the epoch');
    expect(() => sourceDateEpoch({ SOURCE_DATE_EPOCH: "-1" })).toThrow('build: SOURCE_DATE_EPOCH "-1": not a number of seconds since the epoch');
  });

  it("a platform whose engine the registry does not have is named with npm's reason, and nothing is left behind", async () => {
    // npm as the registry answers for a version it does not have; an empty cache.
    const bin = tmp();
    writeFileSync(
      join(bin, "npm"),
      `#!/bin/sh\ncase "$1" in\n  view) echo '["26.0.0", "26.1.0"]' ;;\n  pack) echo '{"error": {"code": "ETARGET", "summary": "No matching version found for '"$2"'."}}'; echo "npm error code ETARGET" >&2; echo "npm error notarget No matching version found for $2." >&2; exit 1 ;;\nesac\n`,
    );
    chmodSync(join(bin, "npm"), 0o755);
    const saved = { PATH: process.env.PATH, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
    process.env.PATH = `${bin}:${process.env.PATH ?? ""}`;
    process.env.XDG_CACHE_HOME = tmp();
    try {
      const host = hostPlatform();
      const other: Platform = { os: "linux", architecture: host.architecture === "amd64" ? "arm64" : "amd64" };
      const packageOf = (p: Platform): string => `node-linux-${p.architecture === "amd64" ? "x64" : "arm64"}`;
      const pkg = packageOf(other);
      // A running Node that builds single executables is the host's engine, and the other
      // platform's is the same version from the registry; an older one (22, 24) takes line 26's
      // newest from the registry for every platform, so the host's is the first to fail.
      const [version, failing] = canBuildSea(process.version) ? [process.version, other] : ["v26.1.0", host];
      expect(await failure({ entry: join(FIXTURES, "adjuster.ts"), platforms: [host, other] })).toEqual({
        message: `build: engine node ${version} for linux/${failing.architecture}: npm pack ${packageOf(failing)}@${version.slice(1)}: No matching version found for ${packageOf(failing)}@${version.slice(1)}.`,
        left: [],
      });
      // A line: its newest version, for every platform.
      expect((await failure({ entry: join(FIXTURES, "adjuster.ts"), node: "26", platforms: [other] })).message).toBe(
        `build: engine node v26.1.0 for linux/${other.architecture}: npm pack ${pkg}@26.1.0: No matching version found for ${pkg}@26.1.0.`,
      );
      expect((await failure({ entry: join(FIXTURES, "adjuster.ts"), node: "26", form: "script" })).message).toBe(
        "build: form script: --node must name a Node binary on the host (the #! line names it), not a version",
      );
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }, 60_000);

  it("the command: an unknown platform is one line and exit 1, with nothing written", async () => {
    const out = join(tmp(), "out");
    const lines: string[] = [];
    const code = await main(["build", join(FIXTURES, "adjuster.ts"), "--name", "adjuster", "--idx", "10", "--out", out, "--platform", "linux/amd64,linux/s390x"], COMMANDS, () => undefined, (l) => lines.push(l));
    expect({ code, lines, exists: existsSync(out) }).toEqual({ code: 1, lines: ['build: platform "linux/s390x": not supported (linux/amd64, linux/arm64)'], exists: false });
  });
});
