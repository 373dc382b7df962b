import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { type ImageSpec, MEDIA_TYPES, tagOf, writeOciArchive } from "../../src/ship/oci-image.js";
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

describe("OCI image archive", () => {
  const host = join(dir, "host-file");
  writeFileSync(host, "#!/bin/true\n");
  const archive = join(dir, "image.tar");
  const long = `/opt/${"d".repeat(60)}/${"f".repeat(60)}`;
  // Made afresh for each archive: the same inputs, not the same objects.
  const spec = (): ImageSpec => ({
    files: [
      { path: "/10-plugin", source: host, mode: 0o755 },
      { path: "/lib/x86_64-linux-gnu/libc.so.6", source: new TextEncoder().encode("not really libc"), mode: 0o644 },
      { path: long, source: new Uint8Array(1000), mode: 0o600 },
    ],
    entrypoint: ["/10-plugin"],
    cmd: ["--socket", "/var/run/nri/nri.sock"],
    env: [],
    name: "docker.io/nri-wire/plugin:1.2.3",
    labels: { "org.opencontainers.image.version": "1.2.3" },
    architecture: "amd64",
  });
  const written = writeOciArchive(spec(), archive);
  const root = unpack(archive);
  const blob = (d: Descriptor): Buffer => readFileSync(join(root, "blobs/sha256", d.digest.slice("sha256:".length)));
  const index = JSON.parse(readFileSync(join(root, "index.json"), "utf8")) as { schemaVersion: number; mediaType: string; manifests: Descriptor[] };

  it("is an image layout: oci-layout, an index naming the image both ways runtimes look it up", () => {
    expect(JSON.parse(readFileSync(join(root, "oci-layout"), "utf8"))).toEqual({ imageLayoutVersion: "1.0.0" });
    expect(index.schemaVersion).toBe(2);
    expect(index.mediaType).toBe(MEDIA_TYPES.index);
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0]!.annotations).toEqual({ "io.containerd.image.name": "docker.io/nri-wire/plugin:1.2.3", "org.opencontainers.image.ref.name": "1.2.3" });
    expect(index.manifests[0]!.platform).toEqual({ architecture: "amd64", os: "linux" });
    expect(statSync(archive).size).toBe(written.archiveBytes);
  });

  it("every descriptor's digest and size are those of its blob, and the config's diff_id is the unpacked layer's", () => {
    const m = index.manifests[0]!;
    const manifestBytes = blob(m);
    expect([sha256(manifestBytes), manifestBytes.length]).toEqual([m.digest, m.size]);
    expect(m.digest).toBe(written.manifestDigest);
    const manifest = JSON.parse(manifestBytes.toString()) as { schemaVersion: number; mediaType: string; config: Descriptor; layers: Descriptor[] };
    expect([manifest.schemaVersion, manifest.mediaType, manifest.config.mediaType]).toEqual([2, MEDIA_TYPES.manifest, MEDIA_TYPES.config]);
    const configBytes = blob(manifest.config);
    expect([sha256(configBytes), configBytes.length]).toEqual([manifest.config.digest, manifest.config.size]);
    expect(manifest.layers.map((l) => l.mediaType)).toEqual([MEDIA_TYPES.layer]);
    const layer = blob(manifest.layers[0]!);
    expect([sha256(layer), layer.length]).toEqual([manifest.layers[0]!.digest, manifest.layers[0]!.size]);
    const config = JSON.parse(configBytes.toString()) as { architecture: string; os: string; config: Record<string, unknown>; rootfs: { type: string; diff_ids: string[] } };
    expect(config.rootfs).toEqual({ type: "layers", diff_ids: [sha256(gunzipSync(layer))] });
    expect(config.config).toEqual({ Entrypoint: ["/10-plugin"], Cmd: ["--socket", "/var/run/nri/nri.sock"], Env: [], Labels: { "org.opencontainers.image.version": "1.2.3" } });
    expect([config.architecture, config.os]).toEqual(["amd64", "linux"]);
  });

  it("the layer holds the files with their modes and bytes, and their parent directories, owned by root", () => {
    const manifest = JSON.parse(blob(index.manifests[0]!).toString()) as { layers: Descriptor[] };
    const layerFile = join(dir, "layer.tar");
    writeFileSync(layerFile, gunzipSync(blob(manifest.layers[0]!)));
    const listing = execFileSync("tar", ["-tvf", layerFile, "--numeric-owner"], { encoding: "utf8" }).trim().split("\n");
    const entries = listing.map((l) => {
      const f = l.split(/\s+/);
      return `${f[0]} ${f[1]} ${f[2]} ${f.at(-1)}`;
    });
    expect(entries).toEqual([
      "drwxr-xr-x 0/0 0 lib/",
      "drwxr-xr-x 0/0 0 lib/x86_64-linux-gnu/",
      "drwxr-xr-x 0/0 0 opt/",
      `drwxr-xr-x 0/0 0 opt/${"d".repeat(60)}/`,
      "-rwxr-xr-x 0/0 12 10-plugin",
      "-rw-r--r-- 0/0 15 lib/x86_64-linux-gnu/libc.so.6",
      `-rw------- 0/0 1000 ${long.slice(1)}`,
    ]);
    const fs = unpack(layerFile);
    expect(readFileSync(join(fs, "10-plugin"), "utf8")).toBe("#!/bin/true\n");
    expect(readFileSync(join(fs, long))).toEqual(Buffer.alloc(1000));
    expect(written.unpackedBytes).toBe(statSync(layerFile).size);
  });

  it("the same inputs give the same archive, byte for byte", () => {
    const again = join(dir, "again.tar");
    writeOciArchive(spec(), again);
    expect(sha256(readFileSync(again))).toBe(sha256(readFileSync(archive)));
  });

  it("refuses a relative path, a path given twice and a name without a tag", () => {
    const spec = { entrypoint: [], cmd: [], env: [], name: "docker.io/nri-wire/x:1" };
    expect(() => writeOciArchive({ ...spec, files: [{ path: "rel", source: new Uint8Array(), mode: 0o644 }] }, join(dir, "bad.tar"))).toThrow('image: path "rel" must be absolute');
    const twice = { path: "/a", source: new Uint8Array(), mode: 0o644 };
    expect(() => writeOciArchive({ ...spec, files: [twice, twice] }, join(dir, "bad.tar"))).toThrow("image: /a given twice");
    expect(() => tagOf("localhost:5000/nri-wire/x")).toThrow('image: name "localhost:5000/nri-wire/x" has no tag');
    expect(tagOf("localhost:5000/nri-wire/x:2.0")).toBe("2.0");
  });
});
