import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { canBuildSea } from "../../src/ship/executable.js";
import { hostPlatform } from "../../src/ship/platform.js";
import { nodeLine, prerequisites } from "../support/prerequisites.js";
import { type Descriptor, filesUnder, type ImageConfig, probedTwice, probeTwice, type Ran, readImage, runBuild, unpackLayers } from "../support/ship-build.js";
import { tempDir } from "../support/temp.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURES = resolve(import.meta.dirname, "fixtures");
const gate = prerequisites("ship", "the image tests", [nodeLine("builds a single executable application (25.5 or later)", canBuildSea)]);
// A file whose tests all skip runs no hook, so nothing would remove a directory made for it.
const dir = gate.ok ? tempDir("nriw-image-") : "";
// The tag, by default: the version in the entry's package.json (the repository's, for the fixtures).
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

/**
 * A clean clone of this repository's HEAD at `path`, its packages installed: hard links to this
 * checkout's node_modules, the files `npm ci` would write from the same package-lock.json.
 */
function cloneRepository(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  execFileSync("git", ["clone", "--quiet", ROOT, path]);
  const modules = join(ROOT, "node_modules");
  mkdirSync(join(path, "node_modules"));
  // Not the test runner's caches (dot directories other than .bin), which change while it runs.
  for (const e of readdirSync(modules)) if (!e.startsWith(".") || e === ".bin") execFileSync("cp", ["-al", join(modules, e), join(path, "node_modules", e)]);
  return path;
}

/** What the tests read of the image built first. */
interface Image {
  index: { manifests: Descriptor[] };
  manifest: { layers: Descriptor[] };
  config: ImageConfig;
  layerDigests: string[];
  rootfs: string;
  layerFiles: string[][];
}

// The Node running the tests is the engine the image is compared with.
describe.skipIf(!gate.ok)("the image and executable nri-wire build makes", () => {
  const host = hostPlatform();
  const [a, b, other] = [join(dir, "a/out"), join(dir, "b/out"), join(dir, "c/out")];
  let linesA: string[] = [];
  let linesB: string[] = [];
  let image!: Image;

  beforeAll(async () => {
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    mkdirSync(join(dir, "c"));
    // Two builds of the same entry from different directories, with different clocks.
    linesA = await runBuild({ cwd: ROOT, entry: join(FIXTURES, "adjuster.ts"), name: "adjuster", out: a });
    linesB = await runBuild({ cwd: "/", entry: join(FIXTURES, "adjuster.ts"), name: "adjuster", out: b });
    await runBuild({ cwd: ROOT, entry: join(FIXTURES, "probe.ts"), name: "probe", out: other });
    const read = readImage(join(a, "adjuster.oci.tar"), dir, host.architecture);
    const { index, manifest, config } = read;
    const rootfs = join(dir, "rootfs");
    const layerFiles = unpackLayers(read, rootfs);
    image = { index, manifest, config, layerDigests: manifest.layers.map((l) => l.digest), rootfs, layerFiles };
  }, 600_000);

  it("two builds of the same entry, from other directories at other times, give the same bytes: executable, image, SBOM, manifests", () => {
    expect(filesUnder(a)).toEqual(["10-adjuster", "adjuster.cdx.json", "adjuster.oci.tar", "chart/Chart.yaml", "chart/templates/_helpers.tpl", "chart/templates/configmap.yaml", "chart/templates/daemonset.yaml", "chart/templates/service.yaml", "chart/templates/servicemonitor.yaml", "chart/values.yaml", "kubernetes/daemonset.yaml"]);
    expect(filesUnder(b)).toEqual(filesUnder(a));
    for (const f of filesUnder(a)) expect(sha256(readFileSync(join(b, f))), f).toBe(sha256(readFileSync(join(a, f))));
    // The printed lines differ only in the output directory.
    expect(linesB.map((l) => l.replaceAll(b, "OUT"))).toEqual(linesA.map((l) => l.replaceAll(a, "OUT")));
  });

  it("has three layers: /etc's users, the engine (binary, loader, libraries), the plugin (launcher, bundle, code cache, probe)", () => {
    const [base, engine, plugin] = image.layerFiles;
    expect(base).toEqual(["etc/", "etc/group", "etc/passwd"]);
    expect(readFileSync(join(image.rootfs, "etc/passwd"), "utf8")).toMatch(/^root:x:0:0:/);
    expect(engine).toContain("usr/local/bin/node");
    expect(engine!.filter((f) => f.includes("libc.so.6") || f.includes("libstdc++.so.6"))).toHaveLength(2);
    expect(engine!.some((f) => f.includes("adjuster"))).toBe(false);
    expect(plugin).toEqual([
      "10-adjuster",
      "usr/",
      "usr/local/",
      "usr/local/lib/",
      "usr/local/lib/nri-wire/",
      "usr/local/lib/nri-wire/10-adjuster/",
      "usr/local/lib/nri-wire/10-adjuster/plugin.cjs",
      "usr/local/lib/nri-wire/10-adjuster/plugin.cjs.cache",
      "usr/local/lib/nri-wire/10-adjuster/probe.cjs",
    ]);
    expect(image.config.history.map((h) => h.created_by)).toEqual([
      "nri-wire build: /etc/passwd and /etc/group (root, nobody)",
      expect.stringMatching(/^nri-wire build: engine node v\d+\.\d+\.\d+.*, stripped, with its loader and libraries$/),
      expect.stringMatching(/^nri-wire build: plugin 10-adjuster, its bundle and V8's code cache of it for node v/),
    ]);
  });

  it("every plugin built with the same engine has the same engine layer: a node stores and maps it once", () => {
    const digests = readImage(join(other, "probe.oci.tar"), dir).manifest.layers.map((l) => l.digest);
    expect(digests.slice(0, 2)).toEqual(image.layerDigests.slice(0, 2));
    expect(digests[2]).not.toBe(image.layerDigests[2]);
  });

  it("its config runs the launcher on the NRI socket, with a PATH, glibc's malloc kept to one arena and the OCI labels", () => {
    const git = execFileSync("git", ["-C", ROOT, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    expect(image.config.created).toBe("1970-01-01T00:00:00Z");
    expect(image.config.config).toEqual({
      Env: ["PATH=/usr/local/bin:/usr/bin:/bin", "MALLOC_ARENA_MAX=1"],
      Entrypoint: ["/10-adjuster"],
      Cmd: ["--socket", "/var/run/nri/nri.sock"],
      Labels: {
        "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
        "org.opencontainers.image.title": "10-adjuster",
        "org.opencontainers.image.description": "The NRI plugin 10-adjuster, built by nri-wire build",
        "org.opencontainers.image.version": VERSION,
        "org.opencontainers.image.source": "https://github.com/nri-wire/nri-wire",
        "org.opencontainers.image.revision": git,
        "org.opencontainers.image.licenses": "Apache-2.0",
      },
    });
  });

  it("the engine is stripped, and the plugin starts from its code cache: accepted by the engine, and refused under other flags, as the launcher says", () => {
    const node = join(image.rootfs, "usr/local/bin/node");
    expect(statSync(node).size).toBeLessThanOrEqual(statSync(process.execPath).size);
    const run = (...flags: string[]) => {
      const r = execFileSync(node, [...flags, join(image.rootfs, "10-adjuster"), "check"], { encoding: "utf8", env: {}, stdio: ["ignore", "pipe", "pipe"] });
      return r.trim();
    };
    expect(run()).toBe('{"id":"10-adjuster","events":"CreateContainer","handlers":["configure","createContainer"]}');
    const r = execFileSync("sh", ["-c", `'${node}' --no-opt '${join(image.rootfs, "10-adjuster")}' check 2>&1 >/dev/null`], { encoding: "utf8", env: {} });
    expect(r.trim()).toBe(`10-adjuster: code cache rejected by node ${process.version}: starting without it`);
    // The cache was accepted: no such line.
    const quiet = execFileSync("sh", ["-c", `'${node}' '${join(image.rootfs, "10-adjuster")}' check 2>&1 >/dev/null`], { encoding: "utf8", env: {} });
    expect(quiet).toBe("");
  });

  it("its launcher answers the readiness probe from the state file alone, with neither the entry nor the bundle", async () => {
    const rootfs = join(dir, "rootfs-probe");
    unpackLayers(readImage(join(other, "probe.oci.tar"), dir, host.architecture), rootfs);
    // Gone from this copy, the bundle and its cache cannot be what the probe reads.
    rmSync(join(rootfs, "usr/local/lib/nri-wire/10-probe/plugin.cjs"));
    rmSync(join(rootfs, "usr/local/lib/nri-wire/10-probe/plugin.cjs.cache"));
    const node = join(rootfs, "usr/local/bin/node");
    const run = (file: string, args: string[], env: NodeJS.ProcessEnv) =>
      new Promise<Ran>((res) => execFile(node, [file, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => res({ code: err === null ? 0 : Number(err.code ?? -1), stdout, stderr })));
    const state = join(dir, "state");
    expect(await probeTwice(run, join(rootfs, "10-probe"), state)).toEqual(probedTwice("10-probe", state));
  });

  it("the SBOM names the image by digest, nri-wire, the engine and each library with its hash", () => {
    const digest = /@(sha256:[0-9a-f]{64}),/.exec(linesA.find((l) => l.includes(".oci.tar"))!)![1]!;
    expect(image.index.manifests.length).toBe(1);
    const bom = JSON.parse(readFileSync(join(a, "adjuster.cdx.json"), "utf8")) as {
      bomFormat: string;
      specVersion: string;
      metadata: { timestamp: string; component: { name: string; version: string; purl: string } };
      components: { name: string; purl?: string; hashes?: { alg: string; content: string }[] }[];
    };
    expect([bom.bomFormat, bom.specVersion, bom.metadata.timestamp]).toEqual(["CycloneDX", "1.6", "1970-01-01T00:00:00Z"]);
    expect(bom.metadata.component).toMatchObject({ name: "localhost/nri-wire/adjuster", version: VERSION, purl: `pkg:oci/adjuster@${encodeURIComponent(digest)}?repository_url=localhost%2Fnri-wire%2Fadjuster&tag=${VERSION}` });
    const names = bom.components.map((c) => c.name);
    expect(names).toContain("nri-wire");
    expect(names).toContain("node");
    expect(names).toContain("libc.so.6");
    const node = bom.components.find((c) => c.name === "node")!;
    expect(node.hashes?.find((h) => h.alg === "SHA-256")?.content).toBe(sha256(readFileSync(join(image.rootfs, "usr/local/bin/node"))));
  });
});

describe.skipIf(!gate.ok)("two clean clones", () => {
  it("build the same plugin into the same bytes and the same image digest", async () => {
    // Two clones at different depths, each building with its own nri-wire from its own
    // directory, at different times, with its own download cache.
    const first = cloneRepository(join(dir, "clones/one/nri-wire"));
    const second = cloneRepository(join(dir, "clones/two/deeper/nri-wire"));
    const outs = [join(dir, "clones/one/out"), join(dir, "clones/two/out")] as const;
    const lines = [
      await runBuild({ cwd: first, entry: join(first, "test/ship/fixtures/adjuster.ts"), name: "adjuster", out: outs[0], repo: first }),
      await runBuild({ cwd: "/", entry: join(second, "test/ship/fixtures/adjuster.ts"), name: "adjuster", out: outs[1], repo: second }),
    ];
    expect(filesUnder(outs[1])).toEqual(filesUnder(outs[0]));
    for (const f of filesUnder(outs[0])) expect(sha256(readFileSync(join(outs[1], f))), f).toBe(sha256(readFileSync(join(outs[0], f))));
    const digest = (l: string[]) => /@(sha256:[0-9a-f]{64}),/.exec(l.find((x) => x.includes(".oci.tar"))!)![1];
    expect(digest(lines[1]!)).toBe(digest(lines[0]!));
    expect(lines[1]!.map((l) => l.replaceAll(outs[1], "OUT"))).toEqual(lines[0]!.map((l) => l.replaceAll(outs[0], "OUT")));
    // The image names the commit both clones are at.
    const git = execFileSync("git", ["-C", first, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    expect(readImage(join(outs[0], "adjuster.oci.tar"), dir).config.config.Labels["org.opencontainers.image.revision"]).toBe(git);
  }, 600_000);
});
