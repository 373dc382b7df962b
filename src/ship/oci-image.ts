/**
 * An OCI image archive written offline: an OCI image layout (oci-layout, index.json, blobs) in a
 * tar, holding one image index with one manifest per platform, each made of gzip layers, no base
 * image. The bytes depend only on the inputs: entries sorted by name, owned by root, dated
 * `created`; gzip at a fixed level with no name, time or OS in its header; JSON written with a
 * fixed key order. `ctr images import` and containers/image's `oci-archive:` read it; index.json
 * names the image both ways they look it up.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Platform, platformName } from "./platform.js";
import { type TarEntry, parentDirs, sortEntries, tarChunks } from "./tar.js";

/** A file of the image: its absolute path inside, and its bytes or the host file holding them. */
export interface ImageFile {
  readonly path: string;
  readonly source: string | Uint8Array;
  readonly mode: number;
}

/** A layer: its files (their parent directories are added) and what its history entry says. */
export interface LayerSpec {
  readonly files: readonly ImageFile[];
  readonly createdBy: string;
}

/** One platform's image: its layers, bottom first, and how it runs. */
export interface PlatformImage {
  readonly platform: Platform;
  readonly layers: readonly LayerSpec[];
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly env: readonly string[];
  /** Labels of the image config. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** What an archive holds. */
export interface ImageSpec {
  /** The image's full name, `registry/repository:tag` (io.containerd.image.name). */
  readonly name: string;
  /** When it was made, seconds since the epoch (SOURCE_DATE_EPOCH): configs, history, file times. */
  readonly created: number;
  readonly images: readonly PlatformImage[];
  /** Annotations of the image index. */
  readonly annotations?: Readonly<Record<string, string>>;
  /**
   * A directory where compressed layers are kept by their digest, so that a layer made before
   * (an engine's) is not compressed again; gzip's output is the same for the same input.
   */
  readonly layerCache?: string;
}

/** A layer as written: its blob's digest and size, and its uncompressed digest and size. */
export interface WrittenLayer {
  readonly digest: string;
  readonly bytes: number;
  readonly diffId: string;
  readonly unpackedBytes: number;
}

/** A platform's manifest as written. */
export interface WrittenManifest {
  readonly platform: Platform;
  readonly digest: string;
  readonly layers: readonly WrittenLayer[];
}

/** What was written: the archive's size, the index's digest (what a pod pins), the manifests. */
export interface WrittenImage {
  readonly archiveBytes: number;
  readonly indexDigest: string;
  readonly manifests: readonly WrittenManifest[];
}

export const MEDIA_TYPES = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

/** Layers at least this large are kept in the layer cache. */
const CACHED_LAYER_BYTES = 1 << 20;

function sha256(data: Uint8Array): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** `repo:tag` → its tag; throws when there is none. */
export function tagOf(name: string): string {
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  if (colon <= slash) throw new Error(`image: name "${name}" has no tag`);
  return name.slice(colon + 1);
}

/** An RFC 3339 time, as OCI writes `created`. */
export function rfc3339(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z");
}

/** gzip with nothing of the machine or the moment in it: no name, time 0, OS "unknown". */
function gzip(data: Uint8Array): Buffer {
  const gz = gzipSync(data, { level: 6 });
  // The header's OS byte is where zlib was built (3 on Linux): the same everywhere instead.
  gz[9] = 255;
  return gz;
}

/** The uncompressed tar of a layer. */
function layerTar(layer: LayerSpec, mtime: number): Buffer {
  const files: TarEntry[] = layer.files.map((f) => {
    if (!f.path.startsWith("/")) throw new Error(`image: path "${f.path}" must be absolute`);
    return { path: f.path.slice(1), mode: f.mode, mtime, data: typeof f.source === "string" ? readFileSync(f.source) : f.source };
  });
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new Error(`image: /${f.path} given twice`);
    seen.add(f.path);
  }
  const dirs: TarEntry[] = parentDirs(files.map((f) => f.path))
    .filter((d) => !seen.has(d))
    .map((path) => ({ path, mode: 0o755, mtime }));
  return Buffer.concat(tarChunks(sortEntries([...dirs, ...files])));
}

/** The compressed layer, from the cache when it holds this tar's. */
function compressed(tar: Buffer, diffId: string, cache: string | undefined): Buffer {
  if (cache === undefined || tar.length < CACHED_LAYER_BYTES) return gzip(tar);
  const file = join(cache, `${diffId.slice("sha256:".length)}.tar.gz`);
  if (existsSync(file)) return readFileSync(file);
  const gz = gzip(tar);
  mkdirSync(cache, { recursive: true });
  writeFileSync(`${file}.${process.pid}`, gz);
  renameSync(`${file}.${process.pid}`, file);
  return gz;
}

/** JSON bytes of a value (key order as written in the code). */
function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

/** Writes the archive of `spec` to `out`. */
export function writeOciArchive(spec: ImageSpec, out: string): WrittenImage {
  if (spec.images.length === 0) throw new Error("image: no platform");
  tagOf(spec.name);
  const created = rfc3339(spec.created);
  const blobs = new Map<string, Uint8Array>();
  const blob = (data: Uint8Array): { digest: string; size: number } => {
    const digest = sha256(data);
    blobs.set(digest, data);
    return { digest, size: data.length };
  };
  const manifests: WrittenManifest[] = [];
  const descriptors: object[] = [];
  for (const image of spec.images) {
    if (manifests.some((m) => m.platform.architecture === image.platform.architecture)) throw new Error(`image: platform ${platformName(image.platform)} given twice`);
    const layers: WrittenLayer[] = image.layers.map((l) => {
      const tar = layerTar(l, spec.created);
      const diffId = sha256(tar);
      const gz = blob(compressed(tar, diffId, spec.layerCache));
      return { digest: gz.digest, bytes: gz.size, diffId, unpackedBytes: tar.length };
    });
    const config = blob(
      json({
        created,
        architecture: image.platform.architecture,
        os: image.platform.os,
        config: { Env: image.env, Entrypoint: image.entrypoint, Cmd: image.cmd, ...(image.labels === undefined ? {} : { Labels: image.labels }) },
        rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
        history: image.layers.map((l) => ({ created, created_by: l.createdBy })),
      }),
    );
    const manifest = blob(
      json({
        schemaVersion: 2,
        mediaType: MEDIA_TYPES.manifest,
        config: { mediaType: MEDIA_TYPES.config, ...config },
        layers: layers.map((l) => ({ mediaType: MEDIA_TYPES.layer, digest: l.digest, size: l.bytes })),
      }),
    );
    manifests.push({ platform: image.platform, digest: manifest.digest, layers });
    descriptors.push({ mediaType: MEDIA_TYPES.manifest, ...manifest, platform: { architecture: image.platform.architecture, os: image.platform.os } });
  }
  const index = blob(json({ schemaVersion: 2, mediaType: MEDIA_TYPES.index, manifests: descriptors, ...(spec.annotations === undefined ? {} : { annotations: spec.annotations }) }));
  const layout = json({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.index,
    manifests: [{ mediaType: MEDIA_TYPES.index, ...index, annotations: { "io.containerd.image.name": spec.name, "org.opencontainers.image.ref.name": tagOf(spec.name) } }],
  });
  const entries: TarEntry[] = [
    { path: "blobs", mode: 0o755 },
    { path: "blobs/sha256", mode: 0o755 },
    ...[...blobs].map(([digest, data]) => ({ path: `blobs/sha256/${digest.slice("sha256:".length)}`, mode: 0o644, data })),
    { path: "index.json", mode: 0o644, data: layout },
    { path: "oci-layout", mode: 0o644, data: json({ imageLayoutVersion: "1.0.0" }) },
  ].map((e) => ({ ...e, mtime: spec.created }));
  const fd = openSync(out, "w", 0o644);
  try {
    for (const chunk of tarChunks(sortEntries(entries))) {
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
    }
  } finally {
    closeSync(fd);
  }
  return { archiveBytes: statSync(out).size, indexDigest: index.digest, manifests };
}
