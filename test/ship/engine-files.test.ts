import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { isElf, readElf, stripElf } from "../../src/ship/elf.js";
import { engineLibraries, libraryDirs } from "../../src/ship/libraries.js";
import { ARCHITECTURES, hostPlatform, parsePlatforms, platformName, type Platform } from "../../src/ship/platform.js";
import { platformRunner } from "../../src/ship/platform-runner.js";
import { tempDir } from "../support/temp.js";

const dir = tempDir("nriw-engine-files-");

const host = hostPlatform();
const node = readFileSync(process.execPath);

/** The names and SHF_ALLOC flags of an ELF file's sections, read here independently of src/. */
function sectionTable(b: Buffer): { name: string; alloc: boolean }[] {
  const shoff = Number(b.readBigUInt64LE(40));
  const count = b.readUInt16LE(60);
  const strndx = b.readUInt16LE(62);
  const header = (i: number) => shoff + i * 64;
  const strOff = Number(b.readBigUInt64LE(header(strndx) + 24));
  return Array.from({ length: count }, (_, i) => {
    const at = strOff + b.readUInt32LE(header(i));
    return { name: b.subarray(at, b.indexOf(0, at)).toString(), alloc: (b.readBigUInt64LE(header(i) + 8) & 2n) !== 0n };
  });
}

describe("ELF files", () => {
  it("the running Node's headers: its machine, loader and libraries", () => {
    const elf = readElf(node, "node");
    expect(elf.machine).toBe(ARCHITECTURES[host.architecture].elfMachine);
    expect(elf.interpreter).toMatch(/^\/lib(64)?\/ld-linux-[\w-]+\.so\.\d$/);
    expect(elf.needed).toEqual(expect.arrayContaining(["libc.so.6", "libstdc++.so.6", "libm.so.6"]));
  });

  it("stripping keeps what a process maps and drops the rest: the stripped Node runs, reads the same, and strips to itself", () => {
    const stripped = Buffer.from(stripElf(node, "node"));
    const before = sectionTable(node);
    const after = sectionTable(stripped);
    // Node from the registry carries symbols and debug information; a distribution's may not.
    if (before.some((s) => !s.alloc && s.name !== ".shstrtab")) expect(stripped.length).toBeLessThan(node.length);
    expect(after.filter((s) => !s.alloc).map((s) => s.name)).toEqual(["", ".shstrtab"]);
    expect(after.map((s) => s.name)).toEqual([...before.filter((s) => s.alloc || s.name === "").map((s) => s.name), ".shstrtab"]);
    expect(readElf(stripped, "stripped")).toEqual(readElf(node, "node"));
    expect(Buffer.from(stripElf(stripped, "stripped")).equals(stripped)).toBe(true);
    const file = join(dir, "node-stripped");
    writeFileSync(file, stripped);
    chmodSync(file, 0o755);
    expect(execFileSync(file, ["-p", "process.version"], { encoding: "utf8" }).trim()).toBe(process.version);
  });

  it("refuses what is not a 64-bit little-endian ELF file", () => {
    expect(isElf(Buffer.from("#!/bin/sh\n"))).toBe(false);
    expect(() => readElf(Buffer.alloc(64), "zeros")).toThrow("elf: zeros: not an ELF file");
    const elf32 = Buffer.from(node.subarray(0, 64));
    elf32[4] = 1;
    expect(() => readElf(elf32, "x")).toThrow("elf: x: not a 64-bit little-endian ELF file");
  });
});

describe("an engine's libraries", () => {
  it("are the loader and every library it needs, transitively, where the image's loader looks", () => {
    const libs = engineLibraries(node, host, "node");
    const elf = readElf(node, "node");
    expect(libs[0]).toBeDefined();
    expect(libs.map((l) => l.path)).toContain(elf.interpreter);
    const names = libs.map((l) => l.path.slice(l.path.lastIndexOf("/") + 1));
    for (const n of elf.needed) if (!elf.interpreter!.endsWith(`/${n}`)) expect(names).toContain(n);
    for (const l of libs) if (l.path !== elf.interpreter) expect(libraryDirs(host)).toContain(dirname(l.path));
    expect(libs.map((l) => l.path)).toEqual(libs.map((l) => l.path).sort());
  });

  it("a missing loader or library is named, with the Debian package that holds it", () => {
    const elf = readElf(node, "node");
    const root = join(dir, "root");
    const arch = ARCHITECTURES[host.architecture];
    expect(() => engineLibraries(node, host, "engine node", root)).toThrow(`engine node: loader ${elf.interpreter!} not found for ${platformName(host)} (on Debian: apt-get install libc6:${arch.debian})`);
    mkdirSync(join(root, dirname(elf.interpreter!)), { recursive: true });
    copyFileSync(process.execPath, join(root, elf.interpreter!));
    expect(() => engineLibraries(node, host, "engine node", root)).toThrow(
      `engine node: shared library ${elf.needed[0]!} (needed by engine node) not found in /lib/${arch.triplet}, /usr/lib/${arch.triplet}`,
    );
  });

  it("a binary for another machine is refused", () => {
    const other: Platform = { os: "linux", architecture: host.architecture === "amd64" ? "arm64" : "amd64" };
    expect(() => engineLibraries(node, other, "engine node")).toThrow(
      `engine node: an ELF file for machine ${ARCHITECTURES[host.architecture].elfMachine}, not for ${platformName(other)} (machine ${ARCHITECTURES[other.architecture].elfMachine})`,
    );
  });
});

describe("platforms", () => {
  it("parses a list in its order; refuses an unknown one and one given twice", () => {
    expect(parsePlatforms("linux/amd64,linux/arm64")).toEqual([
      { os: "linux", architecture: "amd64" },
      { os: "linux", architecture: "arm64" },
    ]);
    expect(parsePlatforms(" linux/arm64/v8 ")).toEqual([{ os: "linux", architecture: "arm64" }]);
    expect(() => parsePlatforms("linux/s390x")).toThrow('platform "linux/s390x": not supported (linux/amd64, linux/arm64)');
    expect(() => parsePlatforms("windows/amd64")).toThrow('platform "windows/amd64": not supported (linux/amd64, linux/arm64)');
    expect(() => parsePlatforms("linux/constructor")).toThrow('platform "linux/constructor": not supported (linux/amd64, linux/arm64)');
    expect(() => parsePlatforms("linux/amd64,")).toThrow('platform "": not supported (linux/amd64, linux/arm64)');
    expect(() => parsePlatforms("linux/amd64,linux/amd64")).toThrow('platform "linux/amd64": given twice');
    expect(() => hostPlatform("s390x")).toThrow("platform: this host's architecture s390x is not supported (linux/amd64, linux/arm64)");
  });

  it("another architecture's programs run through qemu-user; without it the build says what to install", () => {
    expect(platformRunner(host).emulator).toBeUndefined();
    const other: Platform = { os: "linux", architecture: host.architecture === "amd64" ? "arm64" : "amd64" };
    const q = ARCHITECTURES[other.architecture].qemu;
    expect(() => platformRunner(other, host, "")).toThrow(
      `cannot run ${platformName(other)} programs on this ${platformName(host)} host: no qemu-${q}-static or qemu-${q} on PATH (on Debian: apt-get install qemu-user-static)`,
    );
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, `qemu-${q}`), "#!/bin/sh\n");
    chmodSync(join(bin, `qemu-${q}`), 0o755);
    expect(platformRunner(other, host, bin).emulator).toBe(join(bin, `qemu-${q}`));
  });
});
