import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { TOOL_CACHES } from "../support/leftovers.js";
import { tempDir } from "../support/temp.js";

const ROOT = resolve(import.meta.dirname, "../..");

describe("npm run demo", () => {
  it("runs a runtime and three plugins of different eras to the end, and leaves nothing in the temporary directory", async () => {
    const tmp = tempDir("nriw-demo-");
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((res) => {
      const child = execFile(process.execPath, ["--import", "tsx", join(ROOT, "scripts/demo.ts")], { cwd: ROOT, env: { ...process.env, TMPDIR: tmp }, timeout: 120_000 }, (_e, out) =>
        res({ code: child.exitCode, stdout: out }),
      );
    });
    expect(stdout).toContain(`nri-wire demo: one runtime, three plugins, one unix socket (${tmp}/nri-wire-demo-`);
    expect(stdout).toMatch(/plugins saw: modern \d+ calls, classic \d+ calls, legacy \d+ calls/u);
    expect(stdout).not.toContain("UNEXPECTED");
    expect(code).toBe(0);
    expect(readdirSync(tmp).filter((name) => !TOOL_CACHES.some((re) => re.test(name)))).toEqual([]);
  }, 150_000);
});
