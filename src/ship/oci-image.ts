/**
 * An OCI image archive written offline: an OCI image layout (oci-layout, index.json, blobs) in a
 * tar, one gzip layer holding the given files, no base image. `ctr images import` and
 * containers/image's `oci-archive:` read it; the index names the image both ways they look.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { type TarEntry, parentDirs, tarChunks } from "./tar.js";

/** A file of the image: its absolute path inside, and its bytes or the host file holding them. */
export interface ImageFile {
  readonly path: string;
  readonly source: string | Uint8Array;
  readonly mode: number;
}

/** What an image is made of and how it runs. */
export interface ImageSpec {
  readonly files: readonly ImageFile[];
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly env: readonly string[];
  /** The image's full name, `registry/repository:tag` (io.containerd.image.name). */
  readonly name: string;
  /** Labels of the image config. */
  readonly labels?: Readonly<Record<string, string>>;
  /** GOARCH-style architecture; default this process's. */
  readonly architecture?: string;
}

/** What was written: the archive's size, the manifest's digest, the layer's sizes. */
export interface WrittenImage {
  readonly archiveBytes: number;
  readonly manifestDigest: string;
  readonly layerBytes: number;
  readonly unpackedBytes: number;
}

export const MEDIA_TYPES = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

/** Node's `process.arch` as OCI (GOARCH) names it. */
export function ociArchitecture(arch: string = process.arch): string {
  const names: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", ppc64: "ppc64le", s390x: "s390x", riscv64: "riscv64" };
  const a = names[arch];
  if (a === undefined) throw new Error(`image: no OCI architecture for ${arch}`);
  return a;
}

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

/** Writes the archive of `spec` to `out`. */
export function writeOciArchive(spec: ImageSpec, out: string): WrittenImage {
  const files: TarEntry[] = spec.files.map((f) => {
    if (!f.path.startsWith("/")) throw new Error(`image: path "${f.path}" must be absolute`);
    return { path: f.path.slice(1), mode: f.mode, data: typeof f.source === "string" ? readFileSync(f.source) : f.source };
  });
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new Error(`image: /${f.path} given twice`);
    seen.add(f.path);
  }
  const dirs: TarEntry[] = parentDirs(files.map((f) => f.path)).map((path) => ({ path, mode: 0o755 }));
  const layerTar = Buffer.concat(tarChunks([...dirs, ...[...files].sort((a, b) => (a.path < b.path ? -1 : 1))]));
  const layer = gzipSync(layerTar, { level: 6 });
  const architecture = spec.architecture ?? ociArchitecture();
  const config = Buffer.from(
    JSON.stringify({
      architecture,
      os: "linux",
      config: { Entrypoint: spec.entrypoint, Cmd: spec.cmd, Env: spec.env, ...(spec.labels === undefined ? {} : { Labels: spec.labels }) },
      rootfs: { type: "layers", diff_ids: [sha256(layerTar)] },
      history: [{ created_by: "nri-wire build" }],
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.manifest,
      config: { mediaType: MEDIA_TYPES.config, digest: sha256(config), size: config.length },
      layers: [{ mediaType: MEDIA_TYPES.layer, digest: sha256(layer), size: layer.length }],
    }),
  );
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.index,
      manifests: [
        {
          mediaType: MEDIA_TYPES.manifest,
          digest: sha256(manifest),
          size: manifest.length,
          platform: { architecture, os: "linux" },
          annotations: { "io.containerd.image.name": spec.name, "org.opencontainers.image.ref.name": tagOf(spec.name) },
        },
      ],
    }),
  );
  const blob = (data: Uint8Array): TarEntry => ({ path: `blobs/sha256/${sha256(data).slice(7)}`, mode: 0o644, data });
  const entries: TarEntry[] = [
    { path: "blobs", mode: 0o755 },
    { path: "blobs/sha256", mode: 0o755 },
    blob(config),
    blob(layer),
    blob(manifest),
    { path: "index.json", mode: 0o644, data: index },
    { path: "oci-layout", mode: 0o644, data: Buffer.from(JSON.stringify({ imageLayoutVersion: "1.0.0" })) },
  ];
  const fd = openSync(out, "w", 0o644);
  try {
    for (const chunk of tarChunks(entries)) {
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
    }
  } finally {
    closeSync(fd);
  }
  return { archiveBytes: statSync(out).size, manifestDigest: sha256(manifest), layerBytes: layer.length, unpackedBytes: layerTar.length };
}
