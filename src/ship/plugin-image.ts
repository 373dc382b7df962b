/**
 * A plugin's image, as `nri-wire build` lays it out for each platform: three layers, each shared
 * as widely as its content allows,
 *
 *   base    /etc/passwd and /etc/group (root and nobody): the same in every image
 *   engine  the engine's binary, loader, libraries and licence: the same for every plugin built
 *           with that engine version for that platform (engine.ts)
 *   plugin  the launcher, the bundle and its code cache: a few hundred KiB (plugin-layer.ts)
 *
 * and a config that runs the launcher with `--socket /var/run/nri/nri.sock`, a PATH and the
 * engine's memory settings (footprint.ts), and the OCI labels the entry's package.json and git
 * give (title, version, created, source, revision, licenses).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Engine, EngineSource } from "./engine.js";
import { engineEnv } from "./footprint.js";
import { type LayerSpec, type PlatformImage, rfc3339 } from "./oci-image.js";
import { pluginPaths } from "./plugin-layer.js";

/** The base layer; see the module comment. */
export const BASE_LAYER: LayerSpec = {
  files: [
    { path: "/etc/group", source: Buffer.from("root:x:0:\nnogroup:x:65534:\n"), mode: 0o644 },
    { path: "/etc/passwd", source: Buffer.from("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"), mode: 0o644 },
  ],
  createdBy: "nri-wire build: /etc/passwd and /etc/group (root, nobody)",
};

/** The image's environment: a PATH where the engine is, and the engine's memory settings. */
export function imageEnv(engine: Pick<EngineSource, "name">): string[] {
  return ["PATH=/usr/local/bin:/usr/bin:/bin", ...engineEnv(engine.name)];
}

/** What the entry's package says of it. */
export interface EntryPackage {
  /** The directory of the nearest package.json with a version. */
  readonly dir: string;
  readonly version: string;
  readonly license?: string | undefined;
  /** Its repository as a URL to browse (`https://github.com/o/r`). */
  readonly source?: string | undefined;
  /** The commit checked out there, when it is a git work tree. */
  readonly revision?: string | undefined;
}

/** `git+https://github.com/o/r.git` or `github:o/r` → `https://github.com/o/r`. */
export function repositoryUrl(repository: unknown): string | undefined {
  const raw = typeof repository === "string" ? repository : (repository as { url?: unknown } | undefined)?.url;
  if (typeof raw !== "string" || raw === "") return undefined;
  const gh = /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(raw);
  if (gh !== null) return `https://github.com/${gh[1]!}`;
  return raw.replace(/^git\+/, "").replace(/^git:\/\//, "https://").replace(/\.git$/, "");
}

/** The package an entry belongs to (the nearest package.json with a version), or undefined. */
export function entryPackage(entry: string): EntryPackage | undefined {
  for (let dir = dirname(resolve(entry)); ; dir = dirname(dir)) {
    const p = join(dir, "package.json");
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, "utf8")) as { version?: unknown; license?: unknown; repository?: unknown };
      if (typeof pkg.version === "string") {
        let revision: string | undefined;
        try {
          revision = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
        } catch {
          revision = undefined;
        }
        return { dir, version: pkg.version, license: typeof pkg.license === "string" ? pkg.license : undefined, source: repositoryUrl(pkg.repository), revision };
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The OCI labels of a plugin's image. */
export function imageLabels(o: { id: string; tag: string; created: number; pkg: EntryPackage | undefined }): Record<string, string> {
  const labels: Record<string, string> = {
    "org.opencontainers.image.created": rfc3339(o.created),
    "org.opencontainers.image.title": o.id,
    "org.opencontainers.image.description": `The NRI plugin ${o.id}, built by nri-wire build`,
    "org.opencontainers.image.version": o.tag,
  };
  if (o.pkg?.source !== undefined) labels["org.opencontainers.image.source"] = o.pkg.source;
  if (o.pkg?.revision !== undefined) labels["org.opencontainers.image.revision"] = o.pkg.revision;
  if (o.pkg?.license !== undefined) labels["org.opencontainers.image.licenses"] = o.pkg.license;
  return labels;
}

/** The command that runs the plugin in its image: the launcher, or the engine with options and the launcher. */
export function launchCommand(id: string, engine: Pick<Engine, "path">, nodeOptions: readonly string[]): string[] {
  // A #! line passes one argument: options need the engine named.
  return nodeOptions.length === 0 ? [pluginPaths(id).launcher] : [engine.path, ...nodeOptions, pluginPaths(id).launcher];
}

/** The image of one platform: base, engine and plugin layers, and the config. */
export function pluginImage(o: { id: string; engine: Engine; plugin: LayerSpec; nodeOptions: readonly string[]; labels: Record<string, string> }): PlatformImage {
  return {
    platform: o.engine.platform,
    layers: [BASE_LAYER, o.engine.layer, o.plugin],
    entrypoint: launchCommand(o.id, o.engine, o.nodeOptions),
    cmd: ["--socket", "/var/run/nri/nri.sock"],
    env: imageEnv(o.engine),
    labels: o.labels,
  };
}
