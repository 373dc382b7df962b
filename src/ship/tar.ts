/**
 * A ustar archive writer, enough for image layers and image layouts: regular files and
 * directories, owned by root, mtime 0 (the same inputs give the same bytes, hence the same digest).
 */

/** One member of an archive: a directory (no data) or a regular file. */
export interface TarEntry {
  /** Relative path, `/`-separated; a directory's without a trailing slash. */
  readonly path: string;
  readonly mode: number;
  /** Absent for a directory. */
  readonly data?: Uint8Array;
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
  put(octal(0, 12), 136);
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
