/**
 * The loader and shared libraries an engine binary needs, for its platform, found in the build
 * host's library directories the way the loader in the image will look for them (the multiarch
 * directories first: Debian and Ubuntu keep a foreign architecture's libraries there, installed
 * with `dpkg --add-architecture arm64` and `apt-get install libstdc++6:arm64`). Read from the ELF
 * headers, so a foreign architecture's libraries are found without running anything.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { isElf, readElf } from "./elf.js";
import { ARCHITECTURES, type Platform, platformName } from "./platform.js";

/** A file of the engine: its path in the image and the host file holding its bytes. */
export interface HostFile {
  readonly path: string;
  readonly source: string;
}

/** Where the loader looks for a platform's libraries, in its order. */
export function libraryDirs(p: Platform): string[] {
  const t = ARCHITECTURES[p.architecture].triplet;
  return [`/lib/${t}`, `/usr/lib/${t}`, ...(p.architecture === "amd64" ? ["/lib64", "/usr/lib64"] : []), "/lib", "/usr/lib"];
}

/** The Debian package that holds a library, for the hint a missing one gets. */
function debianPackage(soname: string): string | undefined {
  const own: Record<string, string> = { "libstdc++.so.6": "libstdc++6", "libgcc_s.so.1": "libgcc-s1", "libatomic.so.1": "libatomic1" };
  if (own[soname] !== undefined) return own[soname];
  return /^(libc|libm|libdl|libpthread|librt|ld-linux[-\w]*)\.so\.\d+$/.test(soname) ? "libc6" : undefined;
}

function hint(soname: string, p: Platform): string {
  const pkg = debianPackage(soname);
  return pkg === undefined ? "" : ` (on Debian: apt-get install ${pkg}:${ARCHITECTURES[p.architecture].debian})`;
}

/** The ELF file at `file` when it is one for `machine`, else undefined. */
function elfFor(file: string, machine: number): Uint8Array | undefined {
  if (!existsSync(file) || !statSync(file).isFile()) return undefined;
  const bytes = readFileSync(file);
  if (!isElf(bytes) || bytes[4] !== 2 || bytes.readUInt16LE(18) !== machine) return undefined;
  return bytes;
}

/**
 * The loader and the libraries (their dependencies included) that `binary` needs on platform
 * `p`, sorted by path; `what` names the binary in errors. `root` is where the host's file system
 * is (tests give another).
 */
export function engineLibraries(binary: Uint8Array, p: Platform, what: string, root = "/"): HostFile[] {
  const machine = ARCHITECTURES[p.architecture].elfMachine;
  const elf = readElf(binary, what);
  if (elf.machine !== machine) throw new Error(`${what}: an ELF file for machine ${elf.machine}, not for ${platformName(p)} (machine ${machine})`);
  const files: HostFile[] = [];
  let loaderName: string | undefined;
  if (elf.interpreter !== undefined) {
    const host = join(root, elf.interpreter);
    if (elfFor(host, machine) === undefined) throw new Error(`${what}: loader ${elf.interpreter} not found for ${platformName(p)}${hint(basename(elf.interpreter), p)}`);
    files.push({ path: elf.interpreter, source: realpathSync(host) });
    loaderName = basename(elf.interpreter);
  }
  const dirs = libraryDirs(p);
  const found = new Set<string>();
  const queue: { name: string; by: string }[] = elf.needed.map((name) => ({ name, by: what }));
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    // The loader is its own library: the one PT_INTERP names is already mapped.
    if (item.name === loaderName || found.has(item.name)) continue;
    found.add(item.name);
    let hit: { dir: string; bytes: Uint8Array } | undefined;
    for (const dir of dirs) {
      const bytes = elfFor(join(root, dir, item.name), machine);
      if (bytes !== undefined) {
        hit = { dir, bytes };
        break;
      }
    }
    if (hit === undefined) throw new Error(`${what}: shared library ${item.name} (needed by ${item.by}) not found in ${dirs.slice(0, 2).join(", ")}${hint(item.name, p)}`);
    files.push({ path: `${hit.dir}/${item.name}`, source: realpathSync(join(root, hit.dir, item.name)) });
    for (const name of readElf(hit.bytes, item.name).needed) queue.push({ name, by: item.name });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
