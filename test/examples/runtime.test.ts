import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

describe("examples/runtime.ts", () => {
  it("runs a builtin and a process plugin through one CreateContainer, prints the merged adjustment and exits 0", async () => {
    const r = await promisify(execFile)(process.execPath, ["--import", "tsx", "examples/runtime.ts"], { cwd: ROOT, timeout: 60_000 });
    const [first, ...rest] = r.stdout.split("\n");
    expect(first).toBe("plugins: 10-device-injector (builtin), 20-ulimit-adjuster (external)");
    const adjust = JSON.parse(rest.join("\n")) as { linux: { devices: { path: string }[] }; rlimits: { type: string; hard: string; soft: string }[] };
    expect(adjust.linux.devices.map((d) => d.path)).toEqual(["/dev/fuse"]);
    expect(adjust.rlimits).toEqual([{ type: "RLIMIT_NOFILE", hard: "65536", soft: "4096" }]);
    expect(r.stderr).toBe("");
  });
});
