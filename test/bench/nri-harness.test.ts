import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildPrograms, writeRequest } from "../../bench/nri/e2e.js";
import { recordedRequestBytes } from "../../bench/nri/payload.js";
import { parsePhases } from "../../bench/nri/phases.js";
import { type Programs, runSession } from "../../bench/nri/session.js";
import { socketDir } from "../interop/support.js";
import { TOOL_CACHES } from "../support/leftovers.js";
import { go, linux, prerequisites } from "../support/prerequisites.js";
import { tempDir } from "../support/temp.js";

const ROOT = resolve(import.meta.dirname, "../..");

const sessions = prerequisites("bench harness", "the TypeScript and Go session runs", [linux, go("it builds the Go runtime and plugin of the benchmark")]);

describe("bench harness", () => {
  it("parses phase lists and names the bad phase", () => {
    expect(parsePhases("fresh:20,warm,steady:0.5,sparse:20:3")).toEqual([
      { kind: "fresh", count: 20 },
      { kind: "warm" },
      { kind: "steady", seconds: 0.5 },
      { kind: "sparse", millis: 20, count: 3 },
    ]);
    expect(() => parsePhases("sparse:20")).toThrow('bench: phase "sparse:20": field 2 is not a positive number');
    expect(() => parsePhases("idle:3")).toThrow('bench: phase "idle:3": unknown kind');
  });

  it("takes the CreateContainer request out of the recorded containerd session", () => {
    expect(recordedRequestBytes().length).toBeGreaterThan(500);
  });

  describe.skipIf(!sessions.ok)("sessions", () => {
    // Building is setup (go build and tsc), bounded like every build; the test runs the sessions.
    let programs: Programs;
    beforeAll(() => {
      programs = buildPrograms();
    }, 600_000);

    it("runs the TypeScript and the Go pair through every kind of phase with 3 plugins, reading CPU time, memory and allocation", async () => {
      const request = writeRequest(socketDir());
      for (const impl of ["TS", "Go"] as const) {
        const s = await runSession(programs, { runtime: impl, plugin: impl, plugins: 3, request: request.path, phases: "fresh:10,steady:0.1,sparse:1:3", alloc: true });
        expect(s.phases.map((p) => [p.phase, p.lat?.length])).toEqual([
          ["fresh", 10],
          ["steady", undefined],
          ["sparse:1", 3],
        ]);
        expect(s.phases[2]!.cycles).toBe(3);
        for (const p of s.phases) {
          expect(p.cpu_ns.plugins).toHaveLength(3);
          expect(p.cpu_ns.runtime).toBeGreaterThan(0);
          expect(p.p50_us).toBeLessThanOrEqual(p.p99_us);
          expect(p.p99_us).toBeLessThanOrEqual(p.max_us);
          expect(p.alloc_bytes === undefined).toBe(impl === "Go");
          expect(p.plugin_alloc?.length).toBe(impl === "TS" ? 3 : undefined);
        }
        expect(s.memory.plugins).toHaveLength(3);
        expect(s.memory.runtime.hwm).toBeGreaterThan(0);
        expect(s.memory.runtime.pss).toBeGreaterThan(0);
      }
    }, 120_000);

    it("leaves nothing in the temporary directory once a bench process exits (its sessions' socket directories included)", async () => {
      const tmp = tempDir("nriw-b-");
      const url = (path: string): string => JSON.stringify(pathToFileURL(join(ROOT, path)).href);
      const script = [
        `import { readdirSync } from "node:fs";`,
        `import { tmpdir } from "node:os";`,
        `import { socketDir } from ${url("test/interop/support.ts")};`,
        `import { writeRequest } from ${url("bench/nri/e2e.ts")};`,
        `import { runSession } from ${url("bench/nri/session.ts")};`,
        `const request = writeRequest(socketDir());`,
        `const s = await runSession(JSON.parse(process.env.BENCH_PROGRAMS), { runtime: "Go", plugin: "Go", plugins: 1, request: request.path, phases: "steady:0.1" });`,
        `console.log(JSON.stringify({ cycles: s.phases[0].cycles, entries: readdirSync(tmpdir()).length }));`,
      ].join("\n");
      const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
        const env = { ...process.env, TMPDIR: tmp, BENCH_PROGRAMS: JSON.stringify(programs) };
        const child = execFile(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, env, timeout: 60_000 }, (_e, out, err) =>
          res({ code: child.exitCode, stdout: out, stderr: err }),
        );
      });
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const during = JSON.parse(stdout) as { cycles: number; entries: number };
      expect(during.cycles).toBeGreaterThan(0);
      // The request's directory and the session's socket directory existed while it ran.
      expect(during.entries).toBeGreaterThanOrEqual(2);
      expect(readdirSync(tmp).filter((name) => !TOOL_CACHES.some((re) => re.test(name)))).toEqual([]);
    }, 120_000);
  });
});
