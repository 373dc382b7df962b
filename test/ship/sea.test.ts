import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildPlugin } from "../../src/ship/build.js";
import { canBuildSea } from "../../src/ship/executable.js";
import { LOW_FOOTPRINT_OPTIONS } from "../../src/ship/footprint.js";

const dir = mkdtempSync(join(tmpdir(), "nriw-sea-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runExe(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(file, args, { env: {}, timeout: 20_000 }, (err, stdout, stderr) => res({ code: err === null ? 0 : Number(err.code ?? -1), stdout, stderr }));
  });
}

// The Node running the tests builds the executable; lines before 25.5 cannot (build-errors.test.ts checks the refusal).
describe.skipIf(!canBuildSea(process.version))("a single executable application built with node options", () => {
  it("starts with them and with its code cache accepted (the cache is made under the same V8 flags)", async () => {
    const out = join(dir, "out");
    await buildPlugin({ entry: resolve(import.meta.dirname, "fixtures/adjuster.ts"), name: "adjuster", idx: "10", out, tag: "1.0.0", nodeOptions: LOW_FOOTPRINT_OPTIONS });
    const r = await runExe(join(out, "10-adjuster"), ["check"]);
    expect(r).toEqual({ code: 0, stdout: expect.stringContaining('"id":"10-adjuster"'), stderr: "" });
  }, 120_000);
});
