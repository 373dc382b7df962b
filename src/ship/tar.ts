/**
 * ustar archives, enough for image layers and image layouts: a writer of regular files and
 * directories, owned by root (numeric ids, no user or group names), with the modification time
 * given (the same inputs give the same bytes, hence the same digest); and a reader that takes
 * regular files out of an archive (an npm package's tarball).
 */

/** One member of an archive: a directory (no data) or a regular file. */
export interface TarEntry {
  /** Relative path, `/`-separated; a directory's without a trailing slash. */
  readonly path: string;
  readonly mode: number;
  /** Absent for a directory. */
  readonly data?: Uint8Array;
  /** Modification time, seconds since the epoch; default 0. */
  readonly mtime?: number;
}

const BLOCK = 512;

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, "0")}\0`;
}

/** The 512-byte ustar header of `e`; throws for a path ustar cannot hold. */
function header(e: TarEntry): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const dir = e.data === undefined;
  const full = dir ? `${e.path}/` : e.path;
  let name = full;
  let prefix = "";
  if (Buffer.byteLength(full) > 100) {
    const cut = full.lastIndexOf("/", full.length - 2);
    prefix = full.slice(0, cut);
    name = full.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) throw new Error(`tar: path "${e.path}" is too long for ustar`);
  }
  const put = (text: string, at: number): void => {
    h.set(Buffer.from(text, "utf8"), at);
  };
  put(name, 0);
  put(octal(e.mode & 0o7777, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(dir ? 0 : e.data!.length, 12), 124);
  put(octal(e.mtime ?? 0, 12), 136);
  put("        ", 148);
  put(dir ? "5" : "0", 156);
  put("ustar\0", 257);
  put("00", 263);
  put(prefix, 345);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return h;
}

/** The archive of `entries`, in the order given, as chunks to write one after the other. */
export function tarChunks(entries: readonly TarEntry[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (const e of entries) {
    chunks.push(header(e));
    if (e.data !== undefined && e.data.length > 0) {
      chunks.push(e.data);
      const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
      if (pad > 0) chunks.push(new Uint8Array(pad));
    }
  }
  chunks.push(new Uint8Array(2 * BLOCK));
  return chunks;
}

/** Every parent directory of `paths` that is not itself listed, parents first. */
export function parentDirs(paths: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const p of paths) {
    const parts = p.split("/");
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
  }
  return [...dirs].sort();
}

/** The name of an archive member as `tarChunks` writes it: a directory's with a trailing slash. */
export function tarName(e: TarEntry): string {
  return e.data === undefined ? `${e.path}/` : e.path;
}

/** Entries in archive order: by name, so that a directory comes before what it holds. */
export function sortEntries(entries: readonly TarEntry[]): TarEntry[] {
  return [...entries].sort((a, b) => {
    const [x, y] = [tarName(a), tarName(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** The NUL-terminated text of a header field. */
function field(h: Uint8Array, at: number, len: number): string {
  const end = h.subarray(at, at + len).indexOf(0);
  return Buffer.from(h.subarray(at, end < 0 ? at + len : at + end)).toString("utf8");
}

/**
 * The regular files of `archive` whose names are in `wanted`, by name; throws when the archive
 * ends early. Reads ustar, pax (`path`) and GNU long-name headers.
 */
export function readTarFiles(archive: Uint8Array, wanted: ReadonlySet<string>): Map<string, Uint8Array> {
  const found = new Map<string, Uint8Array>();
  let longName: string | undefined;
  for (let at = 0; at + BLOCK <= archive.length; ) {
    const h = archive.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    const size = parseInt(field(h, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(h[156] ?? 0);
    const start = at + BLOCK;
    if (start + size > archive.length) throw new Error(`tar: member at offset ${at} runs past the end of the archive`);
    const data = archive.subarray(start, start + size);
    at = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "L") {
      longName = field(data, 0, data.length);
      continue;
    }
    if (type === "x") {
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(Buffer.from(data).toString("utf8"));
      if (m !== null) longName = m[1];
      continue;
    }
    const prefix = field(h, 345, 155);
    const name = longName ?? (prefix === "" ? field(h, 0, 100) : `${prefix}/${field(h, 0, 100)}`);
    longName = undefined;
    if ((type === "0" || type === "\0") && wanted.has(name)) found.set(name, data);
  }
  return found;
}
