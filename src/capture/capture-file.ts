import { type WriteStream, createWriteStream, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type Direction, SessionDecoder, type SessionRecord } from "./session-decoder.js";

/*
 * The capture format of test/fixtures/vectors (`nri-capture/v1`): NAME.p2r.bin and NAME.r2p.bin
 * hold every byte each side wrote, and NAME.index.json the reads as they happened, so a replay
 * sees the very chunk boundaries the proxy saw.
 */

/** One read on the proxy. */
export interface CaptureChunk {
  seq: number;
  dir: Direction;
  /** Offset of the chunk in its direction's .bin file. */
  offset: number;
  length: number;
  /** Nanoseconds since `started`. */
  t_ns: number;
  /** Wall-clock time of the read, RFC 3339 with nanoseconds. */
  time?: string;
}

/** The end of one direction. */
export interface CaptureClose {
  dir: Direction;
  t_ns: number;
  bytes: number;
}

/** NAME.index.json. */
export interface CaptureIndex {
  format: string;
  session: string;
  listen?: string;
  upstream?: string;
  started?: string;
  files: Record<Direction, string>;
  dirs?: Record<Direction, string>;
  chunks: CaptureChunk[];
  closed?: CaptureClose[];
  note?: string;
}

/** The format name written and accepted. */
export const CAPTURE_FORMAT = "nri-capture/v1";

const DIR_TEXT: Record<Direction, string> = {
  p2r: "bytes written by the plugin (dialing side), read by the runtime",
  r2p: "bytes written by the runtime (listening side), read by the plugin",
};

/**
 * Nanoseconds since the epoch as RFC 3339 in UTC with trailing zeros of the fraction dropped,
 * the form Go's RFC3339Nano gives and the recorded sessions use.
 */
export function formatNanoTime(epochNs: bigint): string {
  const ms = epochNs / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString().slice(0, 19);
  const frac = (epochNs % 1_000_000_000n).toString().padStart(9, "0").replace(/0+$/u, "");
  return `${iso}${frac === "" ? "" : `.${frac}`}Z`;
}

/** Parses RFC 3339 with up to nine fraction digits into nanoseconds since the epoch. */
export function parseNanoTime(text: string): bigint | undefined {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/u.exec(text);
  if (m === null) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}

/** A capture read from disk. */
export interface Capture {
  readonly index: CaptureIndex;
  readonly bytes: Record<Direction, Uint8Array>;
}

/** Reads NAME.index.json and the two files it names (relative to the index's folder). */
export function readCapture(indexPath: string): Capture {
  let text: string;
  try {
    text = readFileSync(indexPath, "utf8");
  } catch (e) {
    throw new Error(`capture: cannot read ${indexPath}: ${(e as Error).message}`, { cause: e });
  }
  let index: CaptureIndex;
  try {
    index = JSON.parse(text) as CaptureIndex;
  } catch (e) {
    throw new Error(`capture: ${indexPath} is not JSON: expected a capture index (NAME.index.json, written by nri-wire record beside NAME.p2r.bin and NAME.r2p.bin)`, { cause: e });
  }
  if (index.format !== CAPTURE_FORMAT) throw new Error(`capture: ${indexPath}: format "${index.format}" is not ${CAPTURE_FORMAT}`);
  if (!Array.isArray(index.chunks)) throw new Error(`capture: ${indexPath}: no chunks list`);
  const read = (dir: Direction): Uint8Array => {
    const name = index.files?.[dir];
    if (typeof name !== "string") throw new Error(`capture: ${indexPath}: no ${dir} file named`);
    const path = join(dirname(indexPath), name);
    try {
      return new Uint8Array(readFileSync(path));
    } catch (e) {
      throw new Error(`capture: cannot read ${path}: ${(e as Error).message}`, { cause: e });
    }
  };
  return { index, bytes: { p2r: read("p2r"), r2p: read("r2p") } };
}

/**
 * Replays a capture through a SessionDecoder, chunk by chunk in recorded order. Where the index
 * and the files disagree (a gap or overlap between chunks, a file shorter or longer than its
 * chunks) the bytes of the file win and a record says so; then each direction is ended.
 */
export function decodeCapture(capture: Capture): SessionRecord[] {
  const { index, bytes } = capture;
  const decoder = new SessionDecoder({ whole: bytes });
  const started = index.started === undefined ? undefined : parseNanoTime(index.started);
  const timeAt = (tNs: number): string | undefined => (started === undefined ? undefined : formatNanoTime(started + BigInt(Math.round(tNs))));
  const out: SessionRecord[] = [];
  const next: Record<Direction, number> = { p2r: 0, r2p: 0 };
  let lastT = 0;
  const note = (dir: Direction, offset: number, tNs: number, error: string): void => {
    const time = timeAt(tNs);
    out.push(time === undefined ? { t_ns: tNs, dir, offset, error } : { t_ns: tNs, time, dir, offset, error });
  };
  const named: Record<Direction, number> = { p2r: 0, r2p: 0 };
  for (const c of index.chunks) if (c.dir === "p2r" || c.dir === "r2p") named[c.dir] = Math.max(named[c.dir], c.offset + c.length);
  const exhausted = new Set<Direction>();
  for (const c of index.chunks) {
    const dir = c.dir;
    if (dir !== "p2r" && dir !== "r2p") continue;
    const data = bytes[dir];
    const from = next[dir];
    const end = Math.min(c.offset + c.length, data.length);
    lastT = c.t_ns;
    if (exhausted.has(dir)) continue;
    if (c.offset !== from) {
      note(dir, from, c.t_ns, `capture: chunk ${c.seq} starts at offset ${c.offset}, the ${dir} bytes before it end at ${from}`);
    }
    if (c.offset + c.length > data.length) {
      exhausted.add(dir);
      note(dir, data.length, c.t_ns, `capture: the ${dir} file ends at offset ${data.length}, chunk ${c.seq} and later ones name bytes up to ${named[dir]}`);
    }
    if (end > from) {
      out.push(...decoder.push(dir, data.subarray(from, end), c.t_ns, c.time ?? timeAt(c.t_ns)));
      next[dir] = end;
    }
  }
  for (const dir of ["p2r", "r2p"] as const) {
    const closed = index.closed?.find((c) => c.dir === dir);
    const t = closed?.t_ns ?? lastT;
    if (next[dir] < bytes[dir].length) {
      note(dir, next[dir], t, `capture: ${bytes[dir].length - next[dir]} ${dir} bytes from offset ${next[dir]} are in no chunk`);
      out.push(...decoder.push(dir, bytes[dir].subarray(next[dir]), t, timeAt(t)));
    }
    out.push(...decoder.end(dir, t, timeAt(t)));
  }
  return out;
}

/** Options of a CaptureWriter. */
export interface CaptureWriterOptions {
  /** Path prefix: writes PREFIX.index.json, PREFIX.p2r.bin, PREFIX.r2p.bin. */
  prefix: string;
  listen?: string;
  upstream?: string;
}

/**
 * Writes a capture as bytes arrive: the .bin files are appended to at once, the index is
 * written by `flush()` and `close()` (it holds every chunk, so it is rewritten whole).
 */
export class CaptureWriter {
  private readonly startedHr = process.hrtime.bigint();
  private readonly startedNs = BigInt(Date.now()) * 1_000_000n;
  private readonly index: CaptureIndex;
  private readonly files: Record<Direction, WriteStream>;
  private readonly written: Record<Direction, number> = { p2r: 0, r2p: 0 };
  private closing: Promise<void> | undefined;

  constructor(readonly options: CaptureWriterOptions) {
    const session = basename(options.prefix);
    const name = (dir: Direction): string => `${session}.${dir}.bin`;
    this.index = {
      format: CAPTURE_FORMAT,
      session,
      ...(options.listen === undefined ? {} : { listen: options.listen }),
      ...(options.upstream === undefined ? {} : { upstream: options.upstream }),
      started: formatNanoTime(this.startedNs),
      files: { p2r: name("p2r"), r2p: name("r2p") },
      dirs: DIR_TEXT,
      chunks: [],
      closed: [],
      note: "chunk = one read() on the proxy; boundaries reflect socket timing, not protocol framing. Concatenating a direction's chunks (by offset) gives its .bin file.",
    };
    const dir = dirname(options.prefix);
    this.files = {
      p2r: createWriteStream(join(dir, name("p2r"))),
      r2p: createWriteStream(join(dir, name("r2p"))),
    };
  }

  /** Path of the index file. */
  get indexPath(): string {
    return `${this.options.prefix}.index.json`;
  }

  /** Nanoseconds since the capture started. */
  now(): number {
    return Number(process.hrtime.bigint() - this.startedHr);
  }

  /** Wall-clock time of `tNs`. */
  timeOf(tNs: number): string {
    return formatNanoTime(this.startedNs + BigInt(tNs));
  }

  /** Records one read of `dir` at `tNs`; returns the chunk entry. */
  chunk(dir: Direction, data: Uint8Array, tNs: number): CaptureChunk {
    const c: CaptureChunk = { seq: this.index.chunks.length, dir, offset: this.written[dir], length: data.length, t_ns: tNs, time: this.timeOf(tNs) };
    this.index.chunks.push(c);
    this.written[dir] += data.length;
    this.files[dir].write(data);
    return c;
  }

  /** Bytes recorded so far in each direction. */
  sizes(): Record<Direction, number> {
    return { ...this.written };
  }

  /** Records the end of `dir`. */
  closeDir(dir: Direction, tNs: number): void {
    if (this.index.closed!.some((c) => c.dir === dir)) return;
    this.index.closed!.push({ dir, t_ns: tNs, bytes: this.written[dir] });
  }

  /** Writes the index as it stands. */
  async flush(): Promise<void> {
    await writeFile(this.indexPath, `${JSON.stringify(this.index, null, 2)}\n`);
  }

  /** Ends both files and writes the final index. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const t = this.now();
      this.closeDir("r2p", t);
      this.closeDir("p2r", t);
      await Promise.all(
        (["p2r", "r2p"] as const).map((d) => new Promise<void>((resolve, reject) => this.files[d].end((e?: Error | null) => (e ? reject(e) : resolve())))),
      );
      await this.flush();
    })();
    return this.closing;
  }
}
