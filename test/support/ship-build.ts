import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { markRegistered, stateFile } from "../../src/ship/readiness.js";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * `nri-wire build ENTRY --name NAME --idx 10 --out OUT [args]` as a user runs it, from `cwd`,
 * with its own download cache (default `OUT/../cache-NAME`, so that nothing one build made, a
 * compressed layer, serves another); resolves with its output lines. `repo` is the checkout of
 * nri-wire that builds (default this one).
 */
export function runBuild(o: { cwd: string; entry: string; name: string; out: string; args?: readonly string[]; cache?: string; env?: NodeJS.ProcessEnv; repo?: string }): Promise<string[]> {
  const repo = o.repo ?? ROOT;
  const args = ["--import", join(repo, "node_modules/tsx/dist/esm/index.mjs"), join(repo, "src/cli/main.ts"), "build", o.entry, "--name", o.name, "--idx", "10", "--out", o.out, ...(o.args ?? [])];
  const env = { ...process.env, XDG_CACHE_HOME: o.cache ?? join(o.out, "..", `cache-${o.name}`), ...o.env };
  return new Promise((res, rej) => {
    execFile(process.execPath, args, { cwd: o.cwd, env, timeout: 300_000 }, (err, stdout, stderr) => {
      if (err !== null) rej(new Error(`build failed: ${stderr}`));
      else res(stdout.trim().split("\n"));
    });
  });
}

/** The files under `out`, relative to it, sorted. */
export function filesUnder(out: string): string[] {
  return readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(out.length + 1))
    .sort();
}

/** A blob's descriptor, as an image layout's index and manifests give it. */
export interface Descriptor {
  digest: string;
  size: number;
  platform?: { architecture: string };
}

/** What the tests read of an image's config. */
export interface ImageConfig {
  created: string;
  config: { Env: string[]; Entrypoint: string[]; Cmd: string[]; Labels: Record<string, string> };
  history: { created_by: string }[];
}

/** An image archive read by the system's tar, the independent reader. */
export interface ReadImage {
  /** A blob's file in the unpacked layout. */
  blobFile(d: Descriptor): string;
  blob(d: Descriptor): Buffer;
  /** The image index's descriptor, as the layout's index.json gives it. */
  indexDescriptor: Descriptor;
  index: { manifests: Descriptor[] };
  manifest: { config: Descriptor; layers: Descriptor[] };
  config: ImageConfig;
}

/**
 * An archive's image index, and the manifest and config of its image for `architecture` (default
 * the first), its layout unpacked into a new directory under `work`.
 */
export function readImage(archive: string, work: string, architecture?: string): ReadImage {
  const to = mkdtempSync(join(work, "layout-"));
  execFileSync("tar", ["-xf", archive, "-C", to]);
  const blobFile = (d: Descriptor): string => join(to, "blobs/sha256", d.digest.slice("sha256:".length));
  const blob = (d: Descriptor): Buffer => readFileSync(blobFile(d));
  const top = JSON.parse(readFileSync(join(to, "index.json"), "utf8")) as { manifests: Descriptor[] };
  const index = JSON.parse(blob(top.manifests[0]!).toString()) as { manifests: Descriptor[] };
  const m = architecture === undefined ? index.manifests[0]! : index.manifests.find((d) => d.platform?.architecture === architecture)!;
  const manifest = JSON.parse(blob(m).toString()) as { config: Descriptor; layers: Descriptor[] };
  return { blobFile, blob, indexDescriptor: top.manifests[0]!, index, manifest, config: JSON.parse(blob(manifest.config).toString()) as ImageConfig };
}

/** Unpacks an image's layers in order into `rootfs`; each layer's file list, as tar lists it. */
export function unpackLayers(image: ReadImage, rootfs: string): string[][] {
  mkdirSync(rootfs, { recursive: true });
  return image.manifest.layers.map((l) => {
    execFileSync("tar", ["-xzf", image.blobFile(l), "-C", rootfs]);
    return execFileSync("tar", ["-tzf", image.blobFile(l)], { encoding: "utf8" }).trim().split("\n");
  });
}

/** What running a built executable gave. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a built executable's readiness probe twice, its entry's top-level code set to throw
 * (fixtures/probe.ts with NRIW_PROBE=throw): with no state file in `stateDir`, then with one this
 * process wrote as a registered plugin would (naming itself and `containerd v2.4.2`).
 */
export async function probeTwice(run: (file: string, args: string[], env: NodeJS.ProcessEnv) => Promise<Ran>, exe: string, stateDir: string): Promise<Ran[]> {
  const args = ["probe", "--state", stateDir];
  const env = { NRIW_PROBE: "throw" };
  mkdirSync(stateDir, { recursive: true });
  const before = await run(exe, args, env);
  markRegistered(stateFile(stateDir), "containerd v2.4.2");
  return [before, await run(exe, args, env)];
}

/** What {@link probeTwice} gives when the probe reads the state file and nothing else. */
export function probedTwice(id: string, stateDir: string): Ran[] {
  return [
    { code: 1, stdout: "", stderr: `${id}: not registered: no state file ${stateFile(stateDir)}\n` },
    { code: 0, stdout: "", stderr: `${id}: registered with containerd v2.4.2 (pid ${process.pid})\n` },
  ];
}
