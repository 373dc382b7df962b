/**
 * `nri-wire build`: from a plugin's entry file, the executable a runtime launches (`NN-NAME`,
 * one per platform), its multi-platform OCI image archive (`NAME.oci.tar`) with its SBOM
 * (`NAME.cdx.json`), a DaemonSet (`kubernetes/daemonset.yaml`) and a Helm chart (`chart/`).
 * Everything is made in a private directory inside the output directory and moved into place at
 * the end, so a failure leaves nothing half-written.
 *
 * Reproducible: the same entry, lockfile (the bundled packages), nri-wire version, engine,
 * options and SOURCE_DATE_EPOCH (default 0) give the same bytes, whatever the directory, the
 * clock or the machine; executable.ts, plugin-layer.ts and oci-image.ts say how.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { checkPluginName } from "../api/identity.js";
import { bundle, loadEsbuild, probeBundle } from "./bundle.js";
import { type Engine, type EngineSource, stageEngine } from "./engine.js";
import { canBuildSea, engineVersion, type ExecutableForm, type SeaStartup, writeScript, writeSea } from "./executable.js";
import { chartFiles, daemonSetYaml } from "./manifests.js";
import { type BuildEngine, BUILD_ENGINES, cacheDir, newestOf, registryEngine } from "./engine-registry.js";
import { BUN_EXEC_ARGV } from "./footprint.js";
import { bunBytecode, makeBunPluginLayer, writeBunExecutable } from "./bun-forms.js";
import { isSupported, OLDEST } from "../internal/engine.js";
import { type PlatformImage, type WrittenManifest, writeOciArchive } from "./oci-image.js";
import { ARCHITECTURES, type Architecture, hostPlatform, type Platform, platformName, platformSlug } from "./platform.js";
import { entryPackage, imageLabels, launchCommand, pluginImage } from "./plugin-image.js";
import { makePluginLayer } from "./plugin-layer.js";
import { bundledPackages, nriWirePackage, sbomJson } from "./sbom.js";

/** What `nri-wire build` is asked. */
export interface BuildOptions {
  readonly entry: string;
  readonly name: string;
  readonly idx: string;
  readonly out: string;
  /** Default `sea`. */
  readonly form?: ExecutableForm;
  /**
   * The engine: a Node binary's absolute path (the host platform's engine; other platforms get
   * the same version from the npm registry), or a version (`26.10.0`, or a line, `26`: its newest)
   * from the npm registry for every platform. Default: the Node running, when it can build a
   * single executable application (25.5 and later) or the form is `script`; else the newest
   * Node 26 from the registry.
   */
  readonly node?: string;
  /**
   * The engine the plugin runs on: `node` (default) or `bun`, a Bun compiled executable and an
   * image of Bun and the bundle's bytecode (bun-forms.ts).
   */
  readonly engine?: BuildEngine;
  /**
   * With engine bun: a Bun binary's absolute path (the host platform's engine; other platforms
   * get the same version from the npm registry), or a version (`1.4.5`, or a line, `1.4`: its
   * newest) from the npm registry for every platform. Default: the newest Bun the registry has
   * of the lines nri-wire runs on.
   */
  readonly bun?: string;
  /** Node/V8 options the plugin always starts with (engine node). */
  readonly nodeOptions?: readonly string[];
  /** What the `sea` form starts from; default `code-cache`. */
  readonly seaStartup?: SeaStartup | undefined;
  /** The image tag; default the version in the entry's package.json. */
  readonly tag?: string;
  /** Default: the host's platform. */
  readonly platforms?: readonly Platform[];
  /** The image's repository, fully qualified; default `localhost/nri-wire/NAME`. */
  readonly repository?: string;
  /** The time of the build, seconds since the epoch; default SOURCE_DATE_EPOCH, else 0. */
  readonly sourceDateEpoch?: number;
  /** Told of what takes long before it starts (a download); default silent. */
  readonly progress?: (line: string) => void;
}

/** What was written, with sizes in bytes. */
export interface BuildResult {
  /** The executables, one per platform (one for all in the script form). */
  readonly executables: readonly { readonly platform: Platform | undefined; readonly path: string; readonly bytes: number }[];
  readonly image: string;
  /** `REPOSITORY:TAG`, what the DaemonSet and the chart name. */
  readonly imageRef: string;
  /** The image index's digest: what pins the image. */
  readonly imageDigest: string;
  readonly imageBytes: number;
  /** One per platform, with its layers (base, engine, plugin). */
  readonly manifests: readonly WrittenManifest[];
  /** The engine of each platform: version, where it came from, its binary's size before and after stripping. */
  readonly engines: readonly { readonly name: string; readonly platform: Platform; readonly version: string; readonly from: string; readonly bytes: { readonly original: number; readonly stripped: number } }[];
  readonly sbom: string;
  readonly daemonSet: string;
  readonly chart: string;
  /** The events the plugin subscribes to, as its `check` mode reported. */
  readonly events: string;
}

/** How long a `check` or a `--build-sea` may take on the host's own platform; ten times that under qemu-user. */
const RUN_TIMEOUT_MS = 20_000;

/** Throws the build's error for an invalid plugin name or index. */
export function checkIdentity(name: string, idx: string): void {
  if (!/^[0-9]{2}$/.test(idx)) throw new Error(`build: index "${idx}" must be two digits 00-99`);
  try {
    checkPluginName(name);
  } catch (e) {
    throw new Error(`build: ${(e as Error).message.replace(/^nri: /, "")}`, { cause: e });
  }
}

const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
/** A registry: localhost, a dotted host name, or a single-label host with a port; a port in each case allowed. */
const DOMAIN = `(?:localhost(?::[0-9]+)?|${LABEL}(?:\\.${LABEL})+(?::[0-9]+)?|${LABEL}:[0-9]+)`;
const REPOSITORY = new RegExp(`^${DOMAIN}(?:/${COMPONENT})+$`);

/** Throws unless `repository` is fully qualified (a registry, then a path): what both runtimes resolve alike. */
export function checkRepository(repository: string): void {
  if (!REPOSITORY.test(repository)) throw new Error(`build: repository "${repository}": not a fully qualified repository name (REGISTRY/PATH in lowercase, such as localhost/nri-wire/adjuster or ghcr.io/acme/adjuster)`);
}

/** The default repository of a plugin: `localhost/nri-wire/` and its name as a repository path allows. */
export function defaultRepository(name: string): string {
  const path = name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[._-]+|[._-]+$/g, "").replace(/[._-]{2,}/g, "-");
  return `localhost/nri-wire/${path === "" ? "plugin" : path}`;
}

/** SOURCE_DATE_EPOCH as seconds; 0 when unset; throws on anything but a count of seconds. */
export function sourceDateEpoch(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.SOURCE_DATE_EPOCH;
  if (v === undefined || v === "") return 0;
  if (!/^[0-9]{1,12}$/.test(v)) throw new Error(`build: SOURCE_DATE_EPOCH "${v}": not a number of seconds since the epoch`);
  return Number(v);
}

/** The output directory, created if needed, and a private directory inside it to build in. */
function staging(out: string): string {
  const where = `build: output directory "${out}"`;
  try {
    mkdirSync(out, { recursive: true });
  } catch (e) {
    throw new Error(`${where}: cannot create: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
  try {
    return mkdtempSync(join(out, ".nri-wire-build-"));
  } catch (e) {
    throw new Error(`${where}: not writable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
}

/** Where each platform's engine comes from (see BuildOptions.node), and the host's Node binary when one was given or runs. */
async function engineSources(node: string | undefined, form: ExecutableForm, platforms: readonly Platform[], progress: (line: string) => void): Promise<{ sources: EngineSource[]; hostBinary: string | undefined }> {
  const host = hostPlatform();
  let hostBinary: string | undefined;
  let version: string;
  const spec = /^v?(\d+)(\.\d+\.\d+)?$/.exec(node ?? "");
  if (node === undefined) {
    if (form === "script" || canBuildSea(process.version)) {
      hostBinary = process.execPath;
      version = process.version;
    } else {
      version = await wrap(`engine node 26 (the running Node ${process.version} cannot build a single executable application)`, () => newestOf("node", "26", host));
    }
  } else if (spec !== null && !existsSync(node)) {
    version = spec[2] === undefined ? await wrap(`engine node ${node}`, () => newestOf("node", spec[1]!, host)) : `v${spec[1]}${spec[2]}`;
  } else {
    if (!isAbsolute(node)) throw new Error(`build: node ${node}: must be an absolute path or a version`);
    hostBinary = node;
    version = await wrap("engine", () => engineVersion("node", node));
  }
  if (form === "script" && hostBinary === undefined) throw new Error("build: form script: --node must name a Node binary on the host (the #! line names it), not a version");
  return { sources: await platformSources("node", version, hostBinary, platforms, progress), hostBinary };
}

/** `engine` at `version` for `p` from the npm registry (or the cache). */
function fromRegistry(engine: BuildEngine, version: string, p: Platform, progress: (line: string) => void): Promise<EngineSource> {
  return wrap(`engine ${engine} ${version} for ${platformName(p)}`, async () => {
    const r = await registryEngine(engine, version, p, cacheDir(), (spec) => progress(`build: fetching ${spec} from the npm registry`));
    return { name: engine, version, platform: p, binary: r.binary, license: r.license, package: { id: r.package, integrity: r.integrity } };
  });
}

/** Each platform's engine: the host's binary, when one was given, for the host's architecture; the registry's otherwise. */
async function platformSources(engine: BuildEngine, version: string, hostBinary: string | undefined, platforms: readonly Platform[], progress: (line: string) => void): Promise<EngineSource[]> {
  const host = hostPlatform();
  const sources: EngineSource[] = [];
  for (const p of platforms) sources.push(hostBinary !== undefined && p.architecture === host.architecture ? { name: engine, version, platform: p, binary: hostBinary } : await fromRegistry(engine, version, p, progress));
  return sources;
}

/** Where each platform's Bun comes from (see BuildOptions.bun), and the Bun that runs `bun build` on this host. */
async function bunSources(bun: string | undefined, platforms: readonly Platform[], progress: (line: string) => void): Promise<{ sources: EngineSource[]; hostBun: string }> {
  const host = hostPlatform();
  const oldest = OLDEST.bun.join(".");
  let hostBinary: string | undefined;
  let version: string;
  const spec = /^v?(\d+)\.(\d+)(\.\d+)?$/.exec(bun ?? "");
  if (bun === undefined) {
    version = await wrap("engine bun", () => newestOf("bun", `^${oldest}`, host));
  } else if (spec !== null && !existsSync(bun)) {
    version = spec[3] === undefined ? await wrap(`engine bun ${bun}`, () => newestOf("bun", `~${spec[1]}.${spec[2]}`, host)) : `${spec[1]}.${spec[2]}${spec[3]}`;
  } else {
    if (!isAbsolute(bun)) throw new Error(`build: bun ${bun}: must be an absolute path or a version`);
    hostBinary = bun;
    version = await wrap("engine", () => engineVersion("bun", bun));
  }
  if (!isSupported({ name: "bun", version })) throw new Error(`build: engine bun ${version}: nri-wire runs on Bun ${oldest} or later`);
  const sources = await platformSources("bun", version, hostBinary, platforms, progress);
  const hostBun = hostBinary ?? sources.find((s) => s.platform.architecture === host.architecture)?.binary ?? (await fromRegistry("bun", version, host, progress)).binary;
  return { sources, hostBun };
}

/** Runs `f`, prefixing its error with `build: what: `. */
async function wrap<T>(what: string, f: () => T | Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw new Error(`build: ${what}: ${(e as Error).message}`, { cause: e });
  }
}

/** The entry's problem from a failed `check`: its last `NN-NAME: ...` line, or why it did not finish. */
function checkProblem(r: { code: number | null; stderr: string; timedOut: boolean }, timeoutMs: number): string {
  if (r.timedOut) return `check did not finish in ${timeoutMs} ms: does it start a plugin itself? export its handlers instead`;
  const line = r.stderr.trim().split("\n").at(-1) ?? "";
  return line.replace(/^[0-9]{2}-\S+: /, "") || `check exited with ${r.code}`;
}

/** Builds everything; see the module comment. */
export async function buildPlugin(o: BuildOptions): Promise<BuildResult> {
  checkIdentity(o.name, o.idx);
  await loadEsbuild();
  const entry = resolve(o.entry);
  const what = `build: entry "${o.entry}"`;
  if (!existsSync(entry) || !statSync(entry).isFile()) throw new Error(`${what}: not found`);
  const pkg = entryPackage(entry);
  const tag = o.tag ?? pkg?.version;
  if (tag === undefined) throw new Error(`${what}: no package.json with a version above it: give --tag`);
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) throw new Error(`build: tag "${tag}" is not a valid image tag`);
  const repository = o.repository ?? defaultRepository(o.name);
  checkRepository(repository);
  const created = o.sourceDateEpoch ?? sourceDateEpoch();
  const form = o.form ?? "sea";
  const engineName = o.engine ?? "node";
  if (!BUILD_ENGINES.includes(engineName)) throw new Error(`build: engine "${String(engineName)}": nri-wire builds plugins for ${BUILD_ENGINES.join(" or ")}`);
  if (engineName === "bun") {
    if (form !== "sea") throw new Error("build: form script: engine bun builds the single executable form only");
    if (o.node !== undefined) throw new Error("build: --node chooses Node's version: with engine bun, --bun does");
    if ((o.nodeOptions ?? []).length > 0) throw new Error(`build: --node-options are Node's: engine bun starts with ${BUN_EXEC_ARGV.length === 0 ? "Bun's defaults" : BUN_EXEC_ARGV.join(" ")}`);
    if (o.seaStartup !== undefined) throw new Error("build: a startup snapshot is Node's: engine bun starts from its bytecode");
  } else if (o.bun !== undefined) throw new Error("build: --bun chooses Bun's version: give --engine bun");
  else if (form === "script" && (o.nodeOptions ?? []).length > 1) {
    throw new Error(`build: form script: takes at most one node option (a #! line passes one argument), got ${o.nodeOptions!.length}`);
  }
  // The options the engine always starts with: the plugin's for Node, the ones measured best for Bun.
  const nodeOptions = engineName === "bun" ? BUN_EXEC_ARGV : (o.nodeOptions ?? []);
  const platforms = o.platforms ?? [hostPlatform()];
  if (platforms.length === 0) throw new Error("build: no platform");
  const out = resolve(o.out);
  const id = `${o.idx}-${o.name}`;
  const existed = existsSync(out);
  const tmp = staging(out);
  let done = false;
  try {
    const progress = o.progress ?? (() => undefined);
    const { sources, hostBinary, hostBun } = engineName === "bun" ? { ...(await bunSources(o.bun, platforms, progress)), hostBinary: undefined } : { ...(await engineSources(o.node, form, platforms, progress)), hostBun: undefined };
    const first = sources[0]!;
    if (engineName === "node" && form === "sea" && !canBuildSea(first.version)) {
      const from = first.package === undefined ? ` (${first.binary})` : "";
      throw new Error(`build: form sea: node ${first.version}${from} cannot build a single executable application: it needs Node 25.5 or later (--node PATH or VERSION)`);
    }
    let bundled: Awaited<ReturnType<typeof bundle>>;
    try {
      bundled = await bundle(entry, { name: o.name, idx: o.idx }, { workingDir: pkg?.dir ?? dirname(entry), startupSnapshot: o.seaStartup === "snapshot" });
    } catch (e) {
      throw new Error(`${what}: bundle: ${(e as Error).message}`, { cause: e });
    }
    const engines: Engine[] = [];
    for (const src of sources) {
      const dir = join(tmp, `engine-${platformSlug(src.platform)}`);
      mkdirSync(dir);
      engines.push(await wrap(`platform ${platformName(src.platform)}`, () => stageEngine(src, dir)));
    }
    const timeout = (e: Engine): number => (e.runner.emulator === undefined ? RUN_TIMEOUT_MS : RUN_TIMEOUT_MS * 10);

    // Each platform's engine runs the entry's check (so the entry is known to load where it
    // ships) and, for Node, makes the code cache of the plugin layer (Bun's bytecode is made
    // once, by the host's Bun).
    let events = "";
    const images: PlatformImage[] = [];
    const labels = imageLabels({ id, tag, created, pkg });
    let bytecode: { bundle: string; bytecode: string } | undefined;
    if (hostBun !== undefined) {
      const dir = join(tmp, "bytecode");
      mkdirSync(dir);
      bytecode = await wrap("engine bun", () => bunBytecode({ hostBun, code: bundled.code, dir, timeoutMs: RUN_TIMEOUT_MS }));
    }
    // A Node image's launcher runs the probe mode from a bundle of its own (plugin-layer.ts).
    const probeCode = bytecode === undefined ? await probeBundle({ name: o.name, idx: o.idx }) : "";
    for (const engine of engines) {
      const dir = join(tmp, `plugin-${platformSlug(engine.platform)}`);
      mkdirSync(dir);
      const made =
        bytecode === undefined
          ? await makePluginLayer({ id, engine, code: bundled.code, probeCode, nodeOptions, dir, timeoutMs: timeout(engine) })
          : await makeBunPluginLayer({ id, engine, made: bytecode, dir, timeoutMs: timeout(engine) });
      if (made.layer === undefined) {
        const on = engines.length > 1 ? ` on ${platformName(engine.platform)}` : "";
        throw new Error(`${what}${on}: ${checkProblem(made.check, timeout(engine))}`);
      }
      events ||= (JSON.parse(made.check.stdout) as { events: string }).events;
      images.push(pluginImage({ id, engine, plugin: made.layer, nodeOptions, labels }));
    }

    // The executables: one for all platforms in the script form, one per platform otherwise.
    const executables: { platform: Platform | undefined; name: string }[] = [];
    if (form === "script") {
      writeScript(hostBinary!, nodeOptions, bundled.code, tmp, id);
      executables.push({ platform: undefined, name: id });
    } else {
      for (const engine of engines) {
        const dir = join(tmp, `sea-${platformSlug(engine.platform)}`);
        mkdirSync(dir);
        await wrap("executable", () =>
          hostBun === undefined
            ? writeSea({ engine, nodeOptions, seaStartup: o.seaStartup, code: bundled.code, dir, name: id, timeoutMs: timeout(engine) })
            : writeBunExecutable({ hostBun, engine, execArgv: nodeOptions, code: bundled.code, dir, name: id, timeoutMs: RUN_TIMEOUT_MS }),
        );
        const name = engines.length === 1 ? id : join(platformSlug(engine.platform), id);
        mkdirSync(dirname(join(tmp, name)), { recursive: true });
        renameSync(join(dir, id), join(tmp, name));
        executables.push({ platform: engine.platform, name });
      }
    }

    const imageRef = `${repository}:${tag}`;
    const imageFile = `${o.name}.oci.tar`;
    const written = writeOciArchive(
      { name: imageRef, created, images, annotations: labels, layerCache: join(cacheDir(), "layers") },
      join(tmp, imageFile),
    );
    const sbomFile = `${o.name}.cdx.json`;
    writeFileSync(
      join(tmp, sbomFile),
      sbomJson({ image: { name: imageRef, tag, repository, digest: written.indexDigest }, created, packages: bundledPackages(bundled.inputs, bundled.workingDir), engines, nriWire: nriWirePackage() }),
    );
    const manifest = { name: o.name, idx: o.idx, version: tag, image: { repository, tag }, command: launchCommand(id, engines[0]!, nodeOptions) };
    mkdirSync(join(tmp, "kubernetes"));
    writeFileSync(join(tmp, "kubernetes/daemonset.yaml"), daemonSetYaml(manifest));
    for (const [path, text] of Object.entries(chartFiles(manifest))) {
      mkdirSync(dirname(join(tmp, "chart", path)), { recursive: true });
      writeFileSync(join(tmp, "chart", path), text);
    }

    // Into place: each artifact replaces the one of an earlier build (of either layout).
    const slugs = (Object.keys(ARCHITECTURES) as Architecture[]).map((architecture) => platformSlug({ os: "linux", architecture }));
    for (const name of [id, ...slugs.map((slug) => join(slug, id)), imageFile, sbomFile, "kubernetes", "chart"]) rmSync(join(out, name), { recursive: true, force: true });
    for (const name of [...executables.map((e) => e.name), imageFile, sbomFile, "kubernetes", "chart"]) {
      mkdirSync(dirname(join(out, name)), { recursive: true });
      renameSync(join(tmp, name), join(out, name));
    }
    done = true;
    return {
      executables: executables.map((e) => ({ platform: e.platform, path: join(out, e.name), bytes: statSync(join(out, e.name)).size })),
      image: join(out, imageFile),
      imageRef,
      imageDigest: written.indexDigest,
      imageBytes: written.archiveBytes,
      manifests: written.manifests,
      engines: engines.map((e) => ({ name: e.name, platform: e.platform, version: e.version, from: e.package === undefined ? e.binary : `${e.package.id} from the npm registry`, bytes: e.bytes })),
      sbom: join(out, sbomFile),
      daemonSet: join(out, "kubernetes/daemonset.yaml"),
      chart: join(out, "chart"),
      events,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    // A failed build into a directory it made leaves no directory either.
    if (!done && !existed && readdirSync(out).length === 0) rmSync(out, { recursive: true, force: true });
  }
}

