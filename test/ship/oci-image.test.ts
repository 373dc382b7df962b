import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { type ImageSpec, MEDIA_TYPES, rfc3339, tagOf, writeOciArchive } from "../../src/ship/oci-image.js";
import { tempDir } from "../support/temp.js";

const dir = tempDir("nriw-oci-");

const sha256 = (b: Uint8Array): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string };
}

/** The archive unpacked by the system's tar, the independent reader. */
function unpack(archive: string): string {
  const to = mkdtempSync(join(dir, "x-"));
  execFileSync("tar", ["-xf", archive, "-C", to]);
  return to;
}

/** `tar -tv` of an archive: mode, owner, size, date and name of each member, in order. */
function listing(archive: string): string[] {
  return execFileSync("tar", ["--numeric-owner", "--utc", "-tvf", archive], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => {
      const f = l.split(/\s+/);
      return `${f[0]} ${f[1]} ${f[2]} ${f[3]} ${f.at(-1)}`;
    });
}

describe("OCI image archive", () => {
  const host = join(dir, "host-file");
  writeFileSync(host, "#!/bin/true\n");
  const archive = join(dir, "image.tar");
  const long = `/opt/${"d".repeat(60)}/${"f".repeat(60)}`;
  const created = 1_700_000_000;
  const base = { files: [{ path: "/etc/passwd", source: new TextEncoder().encode("root:x:0:0::/:/sbin/nologin\n"), mode: 0o644 }], createdBy: "base" };
  // Made afresh for each archive: the same inputs, not the same objects.
  const spec = (): ImageSpec => ({
    name: "registry.example:5000/nri-wire/plugin:1.2.3",
    created,
    annotations: { "org.opencontainers.image.version": "1.2.3" },
    images: (["amd64", "arm64"] as const).map((architecture) => ({
      platform: { os: "linux" as const, architecture },
      layers: [
        base,
        {
          files: [
            { path: "/10-plugin", source: host, mode: 0o755 },
            { path: `/lib/${architecture}/libc.so.6`, source: new TextEncoder().encode(`not really ${architecture}'s libc`), mode: 0o644 },
            { path: long, source: new Uint8Array(1000), mode: 0o600 },
          ],
          createdBy: `plugin for ${architecture}`,
        },
      ],
      entrypoint: ["/10-plugin"],
      cmd: ["--socket", "/var/run/nri/nri.sock"],
      env: ["PATH=/usr/local/bin"],
      labels: { "org.opencontainers.image.version": "1.2.3" },
    })),
  });
  const written = writeOciArchive(spec(), archive);
  const root = unpack(archive);
  const blob = (d: { digest: string }): Buffer => readFileSync(join(root, "blobs/sha256", d.digest.slice("sha256:".length)));
  const layout = JSON.parse(readFileSync(join(root, "index.json"), "utf8")) as { schemaVersion: number; mediaType: string; manifests: Descriptor[] };
  const index = JSON.parse(blob(layout.manifests[0]!).toString()) as { schemaVersion: number; mediaType: string; manifests: Descriptor[]; annotations: Record<string, string> };
  const manifestOf = (d: Descriptor) => JSON.parse(blob(d).toString()) as { schemaVersion: number; mediaType: string; config: Descriptor; layers: Descriptor[] };

  it("is an image layout whose index.json names one image index both ways runtimes look it up", () => {
    expect(JSON.parse(readFileSync(join(root, "oci-layout"), "utf8"))).toEqual({ imageLayoutVersion: "1.0.0" });
    expect([layout.schemaVersion, layout.mediaType]).toEqual([2, MEDIA_TYPES.index]);
    expect(layout.manifests).toHaveLength(1);
    expect(layout.manifests[0]!.mediaType).toBe(MEDIA_TYPES.index);
    expect(layout.manifests[0]!.annotations).toEqual({ "io.containerd.image.name": "registry.example:5000/nri-wire/plugin:1.2.3", "org.opencontainers.image.ref.name": "1.2.3" });
    expect(layout.manifests[0]!.digest).toBe(written.indexDigest);
    expect(statSync(archive).size).toBe(written.archiveBytes);
  });

  it("the image index has one manifest per platform, in the order given, and the annotations", () => {
    expect([index.schemaVersion, index.mediaType]).toEqual([2, MEDIA_TYPES.index]);
    expect(index.manifests.map((m) => [m.mediaType, m.platform])).toEqual([
      [MEDIA_TYPES.manifest, { architecture: "amd64", os: "linux" }],
      [MEDIA_TYPES.manifest, { architecture: "arm64", os: "linux" }],
    ]);
    expect(index.annotations).toEqual({ "org.opencontainers.image.version": "1.2.3" });
    expect(written.manifests.map((m) => m.digest)).toEqual(index.manifests.map((m) => m.digest));
  });

  it("every descriptor's digest and size are those of its blob; the config's diff_ids are the unpacked layers'; the shared layer is one blob", () => {
    for (const d of [layout.manifests[0]!, ...index.manifests]) expect([sha256(blob(d)), blob(d).length]).toEqual([d.digest, d.size]);
    const layerSets = index.manifests.map((d) => {
      const m = manifestOf(d);
      expect([m.schemaVersion, m.mediaType, m.config.mediaType]).toEqual([2, MEDIA_TYPES.manifest, MEDIA_TYPES.config]);
      expect([sha256(blob(m.config)), blob(m.config).length]).toEqual([m.config.digest, m.config.size]);
      for (const l of m.layers) expect([l.mediaType, sha256(blob(l)), blob(l).length]).toEqual([MEDIA_TYPES.layer, l.digest, l.size]);
      const config = JSON.parse(blob(m.config).toString()) as { rootfs: { type: string; diff_ids: string[] } };
      expect(config.rootfs).toEqual({ type: "layers", diff_ids: m.layers.map((l) => sha256(gunzipSync(blob(l)))) });
      return m.layers.map((l) => l.digest);
    });
    expect(layerSets[0]![0]).toBe(layerSets[1]![0]);
    expect(layerSets[0]![1]).not.toBe(layerSets[1]![1]);
    // Five blobs for the layers (one base, two plugin), two configs, two manifests, one index.
    expect(execFileSync("ls", [join(root, "blobs/sha256")], { encoding: "utf8" }).trim().split("\n")).toHaveLength(1 + 2 + 2 + 2 + 1);
  });

  it("the config says when, for which platform, how it runs, and one history entry per layer", () => {
    const m = manifestOf(index.manifests[1]!);
    expect(JSON.parse(blob(m.config).toString())).toEqual({
      created: "2023-11-14T22:13:20Z",
      architecture: "arm64",
      os: "linux",
      config: { Env: ["PATH=/usr/local/bin"], Entrypoint: ["/10-plugin"], Cmd: ["--socket", "/var/run/nri/nri.sock"], Labels: { "org.opencontainers.image.version": "1.2.3" } },
      rootfs: { type: "layers", diff_ids: m.layers.map((l) => sha256(gunzipSync(blob(l)))) },
      history: [
        { created: "2023-11-14T22:13:20Z", created_by: "base" },
        { created: "2023-11-14T22:13:20Z", created_by: "plugin for arm64" },
      ],
    });
    expect(rfc3339(0)).toBe("1970-01-01T00:00:00Z");
  });

  it("a layer holds its files with their modes and bytes and their parent directories, owned by root, dated `created`, sorted by name", () => {
    const m = manifestOf(index.manifests[0]!);
    const gz = blob(m.layers[1]!);
    // gzip: no file name, no time, OS "unknown".
    expect([gz[3], gz.readUInt32LE(4), gz[9]]).toEqual([0, 0, 255]);
    const layerFile = join(dir, "layer.tar");
    writeFileSync(layerFile, gunzipSync(gz));
    expect(listing(layerFile)).toEqual([
      "-rwxr-xr-x 0/0 12 2023-11-14 10-plugin",
      "drwxr-xr-x 0/0 0 2023-11-14 lib/",
      "drwxr-xr-x 0/0 0 2023-11-14 lib/amd64/",
      "-rw-r--r-- 0/0 23 2023-11-14 lib/amd64/libc.so.6",
      "drwxr-xr-x 0/0 0 2023-11-14 opt/",
      `drwxr-xr-x 0/0 0 2023-11-14 opt/${"d".repeat(60)}/`,
      `-rw------- 0/0 1000 2023-11-14 ${long.slice(1)}`,
    ]);
    const fs = unpack(layerFile);
    expect(readFileSync(join(fs, "10-plugin"), "utf8")).toBe("#!/bin/true\n");
    expect(readFileSync(join(fs, long))).toEqual(Buffer.alloc(1000));
    expect(written.manifests[0]!.layers[1]!.unpackedBytes).toBe(statSync(layerFile).size);
    // The archive itself: blobs by name, then index.json and oci-layout, all dated `created`.
    expect(listing(archive).every((l) => l.includes(" 2023-11-14 "))).toBe(true);
    expect(listing(archive).map((l) => l.split(" ").at(-1)).slice(0, 2)).toEqual(["blobs/", "blobs/sha256/"]);
  });

  it("the same inputs give the same archive, byte for byte; another time gives another", () => {
    const again = join(dir, "again.tar");
    writeOciArchive(spec(), again);
    expect(sha256(readFileSync(again))).toBe(sha256(readFileSync(archive)));
    expect(writeOciArchive({ ...spec(), created: created + 1 }, again).indexDigest).not.toBe(written.indexDigest);
  });

  it("a layer in the cache is taken from it, not compressed again", () => {
    const cache = join(dir, "layers");
    const big = { path: "/big", source: new Uint8Array(2 << 20).fill(7), mode: 0o644 };
    const one = (): ImageSpec => ({ name: "localhost/x:1", created: 0, layerCache: cache, images: [{ platform: { os: "linux", architecture: "amd64" }, layers: [{ files: [big], createdBy: "big" }], entrypoint: [], cmd: [], env: [] }] });
    const first = writeOciArchive(one(), join(dir, "cached-1.tar")).manifests[0]!.layers[0]!;
    const file = join(cache, `${first.diffId.slice("sha256:".length)}.tar.gz`);
    expect(sha256(readFileSync(file))).toBe(first.digest);
    // What the cache holds is what the archive gets: the same tar compressed otherwise.
    const planted = gzipSync(gunzipSync(readFileSync(file)), { level: 1 });
    writeFileSync(file, planted);
    expect(sha256(planted)).not.toBe(first.digest);
    expect(writeOciArchive(one(), join(dir, "cached-2.tar")).manifests[0]!.layers[0]!.digest).toBe(sha256(planted));
  });

  it("refuses a relative path, a path given twice, a name without a tag, a platform twice and no platform", () => {
    const img = (files: ImageSpec["images"][number]["layers"][number]["files"]) => ({ platform: { os: "linux" as const, architecture: "amd64" as const }, layers: [{ files, createdBy: "x" }], entrypoint: [], cmd: [], env: [] });
    const spec = (images: ImageSpec["images"], name = "localhost/nri-wire/x:1"): ImageSpec => ({ name, created: 0, images });
    const bad = join(dir, "bad.tar");
    expect(() => writeOciArchive(spec([img([{ path: "rel", source: new Uint8Array(), mode: 0o644 }])]), bad)).toThrow('image: path "rel" must be absolute');
    const twice = { path: "/a", source: new Uint8Array(), mode: 0o644 };
    expect(() => writeOciArchive(spec([img([twice, twice])]), bad)).toThrow("image: /a given twice");
    expect(() => writeOciArchive(spec([img([])], "localhost:5000/nri-wire/x"), bad)).toThrow('image: name "localhost:5000/nri-wire/x" has no tag');
    expect(() => writeOciArchive(spec([img([]), img([])]), bad)).toThrow("image: platform linux/amd64 given twice");
    expect(() => writeOciArchive(spec([]), bad)).toThrow("image: no platform");
    expect(tagOf("localhost:5000/nri-wire/x:2.0")).toBe("2.0");
  });
});
