import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { filesUnder, probedTwice, probeTwice, readImage, runBuild, unpackLayers } from "../support/ship-build.js";
import { tempDir } from "../support/temp.js";

/*
 * `nri-wire build --engine bun`: a Bun compiled executable and an image of Bun and the bundle's
 * bytecode. Bun comes from the npm registry, like Node's binaries for the other platforms.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURES = resolve(import.meta.dirname, "fixtures");
const dir = tempDir("nriw-bun-");
const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
const BUN = ["--engine", "bun"];

/** Runs `file args` with `env` to its end. */
function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => res({ code: err === null ? 0 : Number(err.code ?? -1), stdout, stderr })));
}

describe("nri-wire build --engine bun", () => {
  const [a, b, other] = [join(dir, "a/out"), join(dir, "b/out"), join(dir, "c/out")];
  let linesA: string[] = [];
  let linesB: string[] = [];
  beforeAll(async () => {
    // Two builds of the same entry from different directories, each fetching Bun into its own cache.
    linesA = await runBuild({ cwd: ROOT, entry: join(FIXTURES, "adjuster.ts"), name: "adjuster", out: a, args: BUN, cache: join(dir, "cache-a") });
    linesB = await runBuild({ cwd: "/", entry: join(FIXTURES, "adjuster.ts"), name: "adjuster", out: b, args: BUN, cache: join(dir, "cache-b") });
    await runBuild({ cwd: ROOT, entry: join(FIXTURES, "probe.ts"), name: "probe", out: other, args: BUN, cache: join(dir, "cache-a") });
  }, 600_000);

  it("writes the same outputs as the Node form, and two builds from other directories give the same bytes", () => {
    expect(filesUnder(a)).toEqual(["10-adjuster", "adjuster.cdx.json", "adjuster.oci.tar", "chart/Chart.yaml", "chart/templates/_helpers.tpl", "chart/templates/configmap.yaml", "chart/templates/daemonset.yaml", "chart/templates/service.yaml", "chart/templates/servicemonitor.yaml", "chart/values.yaml", "kubernetes/daemonset.yaml"]);
    for (const f of filesUnder(a)) expect(sha256(readFileSync(join(b, f))), f).toBe(sha256(readFileSync(join(a, f))));
    expect(linesB.map((l) => l.replaceAll(b, "OUT"))).toEqual(linesA.map((l) => l.replaceAll(a, "OUT")));
    expect(linesA[0]).toMatch(/^build: engine bun 1\.\d+\.\d+ for linux\/\w+ \(@oven\/bun-linux-\w+@1\.\d+\.\d+ from the npm registry; stripped [\d.]+ MiB to [\d.]+ MiB\)$/);
  });

  it("the executable runs the entry's check, and its top-level code in each started process with that process's environment", async () => {
    expect((await run(join(a, "10-adjuster"), ["check"])).stdout.trim()).toBe('{"id":"10-adjuster","events":"CreateContainer","handlers":["configure","createContainer"]}');
    const exe = join(other, "10-probe");
    for (const value of ["first", "second"]) {
      const r = await run(exe, ["check"], { NRIW_PROBE: value });
      expect(r.code).toBe(0);
      const probes = r.stderr.split("\n").filter((l) => l.startsWith("probe: "));
      expect(probes.map((l) => (JSON.parse(l.slice("probe: ".length)) as { env: string }).env)).toEqual([value]);
    }
    const thrown = await run(exe, ["check"], { NRIW_PROBE: "throw" });
    expect([thrown.code, thrown.stderr.trimEnd().split("\n").at(-1)]).toEqual([1, "10-probe: cannot load the entry: asked to throw"]);
    // The readiness probe reads the state file alone: the entry does not run.
    expect(await probeTwice(run, exe, join(dir, "state"))).toEqual(probedTwice("10-probe", join(dir, "state")));
  });

  it("its image has the three layers: users, Bun (shared by every plugin built with it), the plugin's launcher, bundle and bytecode; the launcher runs on the image's Bun", async () => {
    const rootfs = join(dir, "rootfs");
    const image = readImage(join(a, "adjuster.oci.tar"), dir);
    const [base, engine, plugin] = unpackLayers(image, rootfs);
    expect(base).toEqual(["etc/", "etc/group", "etc/passwd"]);
    expect(engine).toContain("usr/local/bin/bun");
    expect(engine!.some((f) => f.includes("adjuster"))).toBe(false);
    expect(plugin).toEqual(["10-adjuster", "usr/", "usr/local/", "usr/local/lib/", "usr/local/lib/nri-wire/", "usr/local/lib/nri-wire/10-adjuster/", "usr/local/lib/nri-wire/10-adjuster/plugin.js", "usr/local/lib/nri-wire/10-adjuster/plugin.js.jsc"]);
    expect(image.config.history.map((h) => h.created_by)).toEqual([
      "nri-wire build: /etc/passwd and /etc/group (root, nobody)",
      expect.stringMatching(/^nri-wire build: engine bun 1\.\d+\.\d+ \(@oven\/bun-linux-\w+@1\.\d+\.\d+\), stripped, with its loader and libraries$/),
      expect.stringMatching(/^nri-wire build: plugin 10-adjuster, its bundle and JavaScriptCore's bytecode of it for bun 1\./),
    ]);
    expect([image.config.config.Entrypoint, image.config.config.Cmd, image.config.config.Env]).toEqual([["/10-adjuster"], ["--socket", "/var/run/nri/nri.sock"], ["PATH=/usr/local/bin:/usr/bin:/bin", "BUN_JSC_useFTLJIT=0"]]);
    expect(readFileSync(join(rootfs, "10-adjuster"), "utf8").split("\n")[0]).toBe("#!/usr/local/bin/bun");
    const r = await run(join(rootfs, "usr/local/bin/bun"), [join(rootfs, "10-adjuster"), "check"]);
    expect(r.stdout.trim()).toBe('{"id":"10-adjuster","events":"CreateContainer","handlers":["configure","createContainer"]}');
    const digests = (i: typeof image): string[] => i.manifest.layers.map((l) => l.digest);
    expect(digests(readImage(join(other, "probe.oci.tar"), dir)).slice(0, 2)).toEqual(digests(image).slice(0, 2));
  });

  it("the SBOM names Bun with the registry's package, its hash and licence", () => {
    const bom = JSON.parse(readFileSync(join(a, "adjuster.cdx.json"), "utf8")) as { components: { name: string; purl?: string; licenses?: unknown; hashes?: { alg: string; content: string }[] }[] };
    const bun = bom.components.find((c) => c.name === "bun")!;
    expect(bun.purl).toMatch(/^pkg:npm\/%40oven\/bun-linux-\w+@1\.\d+\.\d+$/);
    expect(bun.licenses).toEqual([{ license: { id: "MIT" } }]);
    expect(bun.hashes?.map((h) => h.alg)).toEqual(["SHA-256", "SHA-512"]);
    expect(bom.components.some((c) => c.name === "node")).toBe(false);
  });

  it("the DaemonSet and the chart run the image's launcher, as for Node", () => {
    const ds = readFileSync(join(a, "kubernetes/daemonset.yaml"), "utf8");
    expect(ds).toContain("localhost/nri-wire/adjuster:");
    expect(ds).toMatch(/command:\n\s+- "\/10-adjuster"\n/);
  });
});
