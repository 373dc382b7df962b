/**
 * `nri-wire build`: from a plugin's entry file, the executable a runtime launches
 * (`NN-NAME`), its OCI image archive (`NAME.oci.tar`), a DaemonSet (`kubernetes/daemonset.yaml`)
 * and a Helm chart (`chart/`). Everything is made in a private directory inside the output
 * directory and moved into place at the end, so a failure leaves nothing half-written.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { checkPluginName } from "../api/identity.js";
import { bundle, loadEsbuild } from "./bundle.js";
import { type ExecutableForm, type SeaStartup, writeExecutable } from "./executable.js";
import { chartFiles, daemonSetYaml, executablePath } from "./manifests.js";
import { type ImageFile, writeOciArchive } from "./oci-image.js";
import { sharedLibraries } from "./shared-libs.js";

/** What `nri-wire build` is asked. */
export interface BuildOptions {
  readonly entry: string;
  readonly name: string;
  readonly idx: string;
  readonly out: string;
  /** Default `sea`. */
  readonly form?: ExecutableForm;
  /** Absolute path of the Node binary to embed or name; default the one running. */
  readonly node?: string;
  /** Node/V8 options the executable always starts with. */
  readonly nodeOptions?: readonly string[];
  /** What the `sea` form starts from; default `code-cache`. */
  readonly seaStartup?: SeaStartup | undefined;
  /** The image tag; default the version in the entry's package.json. */
  readonly tag?: string;
}

/** What was written, with sizes in bytes. */
export interface BuildResult {
  readonly executable: string;
  readonly executableBytes: number;
  readonly image: string;
  /** The reference pods use, `nri-wire/NAME:TAG`. */
  readonly imageRef: string;
  /** The name the archive carries, which CRI resolves that reference to (`docker.io/nri-wire/NAME:TAG`). */
  readonly imageName: string;
  readonly imageBytes: number;
  readonly imageUnpackedBytes: number;
  readonly daemonSet: string;
  readonly chart: string;
  /** The events the plugin subscribes to, as its `check` mode reported. */
  readonly events: string;
}

/** Throws the build's error for an invalid plugin name or index. */
export function checkIdentity(name: string, idx: string): void {
  if (!/^[0-9]{2}$/.test(idx)) throw new Error(`build: index "${idx}" must be two digits 00-99`);
  try {
    checkPluginName(name);
  } catch (e) {
    throw new Error(`build: ${(e as Error).message.replace(/^nri: /, "")}`, { cause: e });
  }
}

/** The version of the package an entry belongs to (the nearest package.json with one). */
export function packageVersion(entry: string): string | undefined {
  for (let dir = dirname(resolve(entry)); ; dir = dirname(dir)) {
    const p = join(dir, "package.json");
    if (existsSync(p)) {
      const v = (JSON.parse(readFileSync(p, "utf8")) as { version?: unknown }).version;
      if (typeof v === "string") return v;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** Runs the bundle's `check` mode: the entry's plugin, or the entry's problem as its error. */
function checkEntry(node: string, bundleFile: string): Promise<string> {
  return new Promise((res, rej) => {
    execFile(node, [bundleFile, "check"], { timeout: 20_000, env: {} }, (err, stdout, stderr) => {
      if (err === null) return res((JSON.parse(stdout) as { events: string }).events);
      if (err.killed === true) return rej(new Error("check did not finish in 20000 ms: does it start a plugin itself? export its handlers instead"));
      // `NN-NAME: <problem>`: the problem is the error.
      const line = stderr.trim().split("\n").at(-1) ?? "";
      rej(new Error(line.replace(/^[0-9]{2}-\S+: /, "") || err.message));
    });
  });
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

/** Builds everything; see the module comment. */
export async function buildPlugin(o: BuildOptions): Promise<BuildResult> {
  checkIdentity(o.name, o.idx);
  await loadEsbuild();
  const entry = resolve(o.entry);
  const what = `build: entry "${o.entry}"`;
  if (!existsSync(entry) || !statSync(entry).isFile()) throw new Error(`${what}: not found`);
  const tag = o.tag ?? packageVersion(entry);
  if (tag === undefined) throw new Error(`${what}: no package.json with a version above it: give --tag`);
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) throw new Error(`build: tag "${tag}" is not a valid image tag`);
  const form = o.form ?? "sea";
  const node = o.node ?? process.execPath;
  const out = resolve(o.out);
  const tmp = staging(out);
  const id = `${o.idx}-${o.name}`;
  try {
    let code: string;
    try {
      code = (await bundle(entry, { name: o.name, idx: o.idx })).code;
    } catch (e) {
      throw new Error(`${what}: bundle: ${(e as Error).message}`, { cause: e });
    }
    const bundleFile = join(tmp, "main.cjs");
    writeFileSync(bundleFile, code);
    let events: string;
    try {
      events = await checkEntry(node, bundleFile);
    } catch (e) {
      throw new Error(`${what}: ${(e as Error).message}`, { cause: e });
    }
    const exe = join(tmp, id);
    try {
      await writeExecutable({ form, node, nodeOptions: o.nodeOptions ?? [], seaStartup: o.seaStartup }, bundleFile, code, exe, tmp);
    } catch (e) {
      throw new Error(`build: executable: ${(e as Error).message}`, { cause: e });
    }

    const imageRef = `nri-wire/${o.name}:${tag}`;
    const imageName = `docker.io/${imageRef}`;
    const manifest = { name: o.name, idx: o.idx, image: imageRef, version: tag };
    const runs = form === "sea" ? exe : node;
    const files: ImageFile[] = [{ path: executablePath(manifest), source: exe, mode: 0o755 }];
    if (form === "script") files.push({ path: node, source: node, mode: 0o755 });
    try {
      for (const lib of await sharedLibraries(runs)) files.push({ path: lib, source: lib, mode: 0o755 });
    } catch (e) {
      throw new Error(`build: image: ${(e as Error).message}`, { cause: e });
    }
    const imageFile = join(tmp, `${o.name}.oci.tar`);
    const written = writeOciArchive(
      {
        files,
        entrypoint: [executablePath(manifest)],
        cmd: ["--socket", "/var/run/nri/nri.sock"],
        env: [],
        name: imageName,
        labels: { "org.opencontainers.image.title": id, "org.opencontainers.image.version": tag },
      },
      imageFile,
    );
    mkdirSync(join(tmp, "kubernetes"));
    writeFileSync(join(tmp, "kubernetes/daemonset.yaml"), daemonSetYaml(manifest));
    for (const [path, text] of Object.entries(chartFiles(manifest))) {
      mkdirSync(dirname(join(tmp, "chart", path)), { recursive: true });
      writeFileSync(join(tmp, "chart", path), text);
    }

    // Into place: each artifact replaces the one of an earlier build.
    for (const name of [id, `${o.name}.oci.tar`, "kubernetes", "chart"]) {
      rmSync(join(out, name), { recursive: true, force: true });
      renameSync(join(tmp, name), join(out, name));
    }
    return {
      executable: join(out, id),
      executableBytes: statSync(join(out, id)).size,
      image: join(out, `${o.name}.oci.tar`),
      imageRef,
      imageName,
      imageBytes: written.archiveBytes,
      imageUnpackedBytes: written.unpackedBytes,
      daemonSet: join(out, "kubernetes/daemonset.yaml"),
      chart: join(out, "chart"),
      events,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
