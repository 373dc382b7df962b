/**
 * The software bill of materials written beside the image archive (`NAME.cdx.json`, CycloneDX
 * 1.6 JSON): the image as its subject (by its index digest), the npm packages the bundle holds
 * (found from the bundler's list of inputs, each with its name, version and licence from its
 * package.json), nri-wire itself, and for each platform the engine (with the registry's
 * integrity when it came from there) and the loader and libraries (with their SHA-256 and, where
 * dpkg knows the file, their Debian package). No serial number and the image's creation time:
 * the same build writes the same bytes.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import type { Engine } from "./engine.js";
import { rfc3339 } from "./oci-image.js";
import { ARCHITECTURES, platformName } from "./platform.js";

/** A package the bundle holds. */
export interface BundledPackage {
  readonly name: string;
  readonly version: string;
  readonly license?: string | undefined;
}

interface PackageJson {
  name?: unknown;
  version?: unknown;
  license?: unknown;
}

function readPackage(file: string): BundledPackage | undefined {
  const p = JSON.parse(readFileSync(file, "utf8")) as PackageJson;
  if (typeof p.name !== "string" || typeof p.version !== "string") return undefined;
  return { name: p.name, version: p.version, license: typeof p.license === "string" ? p.license : undefined };
}

/**
 * The packages of the bundle's inputs (paths relative to `workingDir`): each input under a
 * `node_modules` directory belongs to the package of the nearest package.json with a name above
 * it. Sorted by name.
 */
export function bundledPackages(inputs: readonly string[], workingDir: string): BundledPackage[] {
  const byName = new Map<string, BundledPackage>();
  const seenDirs = new Set<string>();
  for (const input of inputs) {
    const file = resolve(workingDir, input);
    if (!file.includes(`${sep}node_modules${sep}`)) continue;
    for (let dir = dirname(file); dir.includes(`${sep}node_modules${sep}`); dir = dirname(dir)) {
      if (seenDirs.has(dir)) break;
      seenDirs.add(dir);
      const pj = join(dir, "package.json");
      const pkg = existsSync(pj) ? readPackage(pj) : undefined;
      if (pkg !== undefined) {
        byName.set(`${pkg.name}@${pkg.version}`, pkg);
        break;
      }
    }
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.version < b.version ? -1 : 1));
}

/** nri-wire's own package (always in the bundle: the executable's main module is its). */
export function nriWirePackage(): BundledPackage {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const pj = join(dir, "package.json");
    if (existsSync(pj)) {
      const pkg = readPackage(pj);
      if (pkg?.name === "nri-wire") return pkg;
    }
    if (dirname(dir) === dir) throw new Error("sbom: nri-wire's package.json not found above its modules");
  }
}

/** `pkg:npm/%40scope/name@1.0.0`. */
function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, "%40")}@${version}`;
}

function licenses(license: string | undefined): object[] | undefined {
  if (license === undefined) return undefined;
  return /^[A-Za-z0-9.+-]+$/.test(license) ? [{ license: { id: license } }] : [{ expression: license }];
}

/** The Debian package and version of a host file, when dpkg knows it (`libc6`, `2.36-9+deb12u14`). */
function debianPackageOf(file: string, arch: string): { name: string; version: string } | undefined {
  try {
    const owner = execFileSync("dpkg-query", ["-S", file], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).split(":")[0]!.trim();
    const version = execFileSync("dpkg-query", ["-W", "-f=${Version}", `${owner}:${arch}`], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return version === "" ? undefined : { name: owner, version };
  } catch {
    return undefined;
  }
}

function sha256File(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** The SBOM's JSON text. */
export function sbomJson(o: {
  image: { name: string; tag: string; repository: string; digest: string };
  created: number;
  packages: readonly BundledPackage[];
  engines: readonly Engine[];
  nriWire: BundledPackage;
}): string {
  const components: object[] = [];
  const npm = [...o.packages];
  if (!npm.some((p) => p.name === o.nriWire.name)) npm.push(o.nriWire);
  for (const p of npm.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const purl = npmPurl(p.name, p.version);
    components.push({ type: "library", "bom-ref": purl, name: p.name, version: p.version, purl, ...(p.license === undefined ? {} : { licenses: licenses(p.license) }) });
  }
  for (const e of o.engines) {
    const platform = platformName(e.platform);
    const arch = ARCHITECTURES[e.platform.architecture].debian;
    const props = [{ name: "nri-wire:platform", value: platform }];
    const hashes = [{ alg: "SHA-256", content: sha256File(e.staged) }];
    if (e.package !== undefined) {
      const [name, version] = [e.package.id.slice(0, e.package.id.lastIndexOf("@")), e.package.id.slice(e.package.id.lastIndexOf("@") + 1)];
      const purl = npmPurl(name, version);
      const integrity = /^sha512-(.+)$/.exec(e.package.integrity);
      components.push({
        type: "application",
        "bom-ref": `${purl}?platform=${platform}`,
        name: e.name,
        version: e.version,
        purl,
        licenses: [{ license: { id: "MIT" } }],
        description: `the engine for ${platform}, stripped (the SHA-256 is of the stripped binary; the SHA-512 of the registry's tarball)`,
        hashes: [...hashes, ...(integrity === null ? [] : [{ alg: "SHA-512", content: Buffer.from(integrity[1]!, "base64").toString("hex") }])],
        properties: props,
      });
    } else {
      components.push({ type: "application", "bom-ref": `engine:${e.name}@${e.version}?platform=${platform}`, name: e.name, version: e.version, description: `the engine for ${platform}, stripped`, hashes, properties: props });
    }
    for (const lib of e.libraries) {
      const deb = debianPackageOf(lib.source, arch);
      const purl = deb === undefined ? undefined : `pkg:deb/debian/${deb.name}@${encodeURIComponent(deb.version)}?arch=${arch}`;
      components.push({
        type: "library",
        "bom-ref": `file:${lib.path}?platform=${platform}`,
        name: lib.path.slice(lib.path.lastIndexOf("/") + 1),
        ...(deb === undefined ? {} : { version: deb.version, purl }),
        description: `${lib.path} in the ${platform} image${deb === undefined ? "" : `, from the Debian package ${deb.name}`}`,
        hashes: [{ alg: "SHA-256", content: sha256File(lib.source) }],
        properties: props,
      });
    }
  }
  const subject = `pkg:oci/${o.image.repository.slice(o.image.repository.lastIndexOf("/") + 1)}@${encodeURIComponent(o.image.digest)}?repository_url=${encodeURIComponent(o.image.repository)}&tag=${encodeURIComponent(o.image.tag)}`;
  const bom = {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    version: 1,
    metadata: {
      timestamp: rfc3339(o.created),
      tools: { components: [{ type: "application", name: o.nriWire.name, version: o.nriWire.version }] },
      component: { type: "container", "bom-ref": subject, name: o.image.repository, version: o.image.tag, purl: subject },
    },
    components,
  };
  return `${JSON.stringify(bom, null, 2)}\n`;
}
