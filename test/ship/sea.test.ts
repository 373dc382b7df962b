import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { buildPlugin } from "../../src/ship/build.js";
import { canBuildSea } from "../../src/ship/executable.js";
import { LOW_FOOTPRINT_OPTIONS } from "../../src/ship/footprint.js";
import { nodeLine, prerequisites } from "../support/prerequisites.js";
import { probedTwice, probeTwice } from "../support/ship-build.js";
import { tempDir } from "../support/temp.js";
import { waitFor } from "../support/wait.js";

const gate = prerequisites("ship", "the single executable application tests", [nodeLine("builds a single executable application (25.5 or later)", canBuildSea)]);
// A file whose tests all skip runs no hook, so nothing would remove a directory made for it.
const dir = gate.ok ? tempDir("nriw-sea-") : "";

/** Runs the executable to its end (killed if the test ends first). */
function runExe(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const done = new Promise<{ code: number; stdout: string; stderr: string }>((res) => {
    const child = execFile(file, args, { env }, (err, stdout, stderr) => res({ code: err === null ? 0 : Number(err.code ?? -1), stdout, stderr }));
    onTestFinished(() => void child.kill("SIGKILL"));
  });
  return waitFor(done, `${file} ${args.join(" ")} to exit`);
}

interface Probe {
  env: string | null;
  execArgv: string[];
  /** performance.timeOrigin: when the process's clock started, in ms since the epoch. */
  origin: number;
  now: number;
  /** Whether `node:v8` was loaded when the entry ran. */
  v8: boolean;
}

function probes(stderr: string): Probe[] {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("probe: "))
    .map((l) => JSON.parse(l.slice("probe: ".length)) as Probe);
}

// The Node running the tests builds the executable; lines before 25.5 cannot (build-errors.test.ts checks the refusal).
describe.skipIf(!gate.ok)("a single executable application", () => {
  const STARTUPS = ["snapshot", "code-cache"] as const;
  const out = (seaStartup: (typeof STARTUPS)[number]): string => join(dir, `out-${seaStartup}`);
  // Building is setup (bundling, the SEA blob, the snapshot), bounded like every build; the tests run what it built.
  beforeAll(async () => {
    for (const seaStartup of STARTUPS) {
      await buildPlugin({ entry: resolve(import.meta.dirname, "fixtures/probe.ts"), name: "probe", idx: "10", out: out(seaStartup), tag: "1.0.0", nodeOptions: LOW_FOOTPRINT_OPTIONS, seaStartup });
    }
  }, 600_000);

  it.each(STARTUPS)("from a %s runs the entry's top-level code in each started process, under the node options baked in", async (seaStartup) => {
    const exe = join(out(seaStartup), "10-probe");
    for (const value of ["first", "second"]) {
      const started = Date.now();
      const r = await runExe(exe, ["check"], { NRIW_PROBE: value });
      const ended = Date.now();
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"id":"10-probe"');
      // One line: the entry ran once, here, with this process's environment; nothing else was
      // written (V8 accepted what the build made under the same flags).
      const lines = r.stderr.split("\n").filter((l) => l !== "");
      expect(lines).toHaveLength(1);
      const [p] = probes(r.stderr);
      expect(p!.env).toBe(value);
      expect(p!.execArgv).toEqual([...LOW_FOOTPRINT_OPTIONS]);
      // This process's clock: it started after this test started the process (not when the
      // build did), and its reading lies within the process's life (Date.now() is whole ms).
      expect(p!.origin).toBeGreaterThanOrEqual(started - 1);
      expect(p!.now).toBeGreaterThan(0);
      expect(p!.origin + p!.now).toBeLessThanOrEqual(ended + 1);
      // Only the snapshot form needs node:v8 (to be handed its main function); the code cache form never loads it.
      expect(p!.v8).toBe(seaStartup === "snapshot");
    }
    // Top-level code that throws in the started process: its stack, then one line naming it.
    const r = await runExe(exe, ["check"], { NRIW_PROBE: "throw" });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split("\n").at(-1)).toBe("10-probe: cannot load the entry: asked to throw");
    // Named as plugin-main names itself: by the runtime's variables when it sets them.
    const renamed = await runExe(exe, ["check"], { NRIW_PROBE: "throw", NRI_PLUGIN_IDX: "20", NRI_PLUGIN_NAME: "renamed" });
    expect(renamed.code).toBe(1);
    expect(renamed.stderr.trimEnd().split("\n").at(-1)).toBe("20-renamed: cannot load the entry: asked to throw");
  });

  it.each(STARTUPS)("from a %s answers the readiness probe from the state file alone, without running the entry", async (seaStartup) => {
    const state = join(dir, `state-${seaStartup}`);
    expect(await probeTwice(runExe, join(out(seaStartup), "10-probe"), state)).toEqual(probedTwice("10-probe", state));
  });
});
