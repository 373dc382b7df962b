import { chmodSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildPlugin } from "../../src/ship/build.js";
import { notRoot, prerequisites } from "../support/prerequisites.js";
import { tempDir } from "../support/temp.js";

// Root writes into a directory of mode 0555 all the same.
const unwritable = prerequisites("ship", "the check of an output directory that cannot be written", [notRoot]);

const FIXTURES = resolve(import.meta.dirname, "fixtures");
function tmp(): string {
  return tempDir("nriw-ship-");
}

/** The build's error for these options, and what it left in the output directory. */
async function failure(o: { entry: string; name?: string; idx?: string; out?: string; node?: string }): Promise<{ message: string; left: string[] }> {
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
      message: `build: executable: form sea: node v24.1.0 (${fake}) cannot build a single executable application: it needs Node 25.5 or later (--node PATH)`,
      left: [],
    });
  }, 60_000);
});
