import { readFileSync } from "node:fs";
import type { JsonValue } from "@bufbuild/protobuf";
import { type Capture, type CaptureChunk, readCapture } from "../../src/capture/capture-file.js";
import type { Direction, SessionRecord } from "../../src/capture/session-decoder.js";
import { concat } from "../support/bytes.js";

/** Captures and damaged copies of them, for the decoder and recorder tests. */

export const SESSIONS = ["new-runtime--new-plugin", "new-runtime--legacy-plugin"] as const;

/** One message of NAME.frames.json, the decoded view the recording tool made with the Go descriptors. */
export interface GoldenMessage {
  order: number;
  dir: Direction;
  connId: number;
  streamId: number;
  typeName: string;
  flags: number;
  length: number;
  fileOffsets: number[];
  muxFrames: number[];
  doneChunkSeq: number;
  doneTNs: number;
  service: string;
  method: string;
  timeoutNano?: number;
  status?: { code: number; message: string };
  payloadType?: string;
  payload?: JsonValue;
}

/** A mux frame of NAME.frames.json. */
export interface GoldenMuxFrame {
  n: number;
  dir: Direction;
  offset: number;
  connId: number;
  length: number;
}

export interface Golden {
  messages: GoldenMessage[];
  muxFrames: Record<Direction, GoldenMuxFrame[]>;
}

const dir = new URL("../fixtures/vectors/", import.meta.url);

export function indexPath(session: string): string {
  return new URL(`${session}.index.json`, dir).pathname;
}

export function loadCapture(session: string): Capture {
  return readCapture(indexPath(session));
}

export function loadGolden(session: string): Golden {
  return JSON.parse(readFileSync(new URL(`${session}.frames.json`, dir), "utf8")) as Golden;
}

/** The fields of a decoded message the recorded view also has, named as the decoder names them. */
export function expectedFields(g: GoldenMessage, shift = 0): Record<string, unknown> {
  const e: Record<string, unknown> = {
    dir: g.dir,
    offset: g.fileOffsets[0]! + shift,
    conn: g.connId,
    stream: g.streamId,
    type: g.typeName,
    flags: g.flags,
    length: g.length,
    service: g.service,
    method: g.method,
  };
  if (g.timeoutNano !== undefined) e.timeoutNano = g.timeoutNano;
  if (g.payloadType !== undefined) e.payloadType = g.payloadType;
  if (g.payload !== undefined) e.payload = g.payload;
  return e;
}

/** The same fields picked from a decoded record, plus its status without the code's name. */
export function decodedFields(r: SessionRecord): Record<string, unknown> {
  const keys = ["dir", "offset", "conn", "stream", "type", "flags", "length", "service", "method", "timeoutNano", "payloadType", "payload"] as const;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (r[k] !== undefined) out[k] = r[k];
  return out;
}

/** A copy of a capture with `dir`'s byte at `at` set to `value` (the index is unchanged). */
export function withByte(c: Capture, d: Direction, at: number, value: number): Capture {
  const bytes = new Uint8Array(c.bytes[d]);
  bytes[at] = value;
  return { index: c.index, bytes: { ...c.bytes, [d]: bytes } };
}

/** A copy with `inserted` put into `dir`'s bytes at `at`; the chunk holding `at` grows by it. */
export function withInserted(c: Capture, d: Direction, at: number, inserted: Uint8Array): Capture {
  const old = c.bytes[d];
  const bytes = concat([old.subarray(0, at), inserted, old.subarray(at)]);
  const chunks = c.index.chunks.map((ch): CaptureChunk => {
    if (ch.dir !== d) return ch;
    if (ch.offset >= at && !(at === 0 && ch.offset === 0)) return { ...ch, offset: ch.offset + inserted.length };
    if (ch.offset + ch.length >= at) return { ...ch, length: ch.length + inserted.length };
    return ch;
  });
  return { index: { ...c.index, chunks }, bytes: { ...c.bytes, [d]: bytes } };
}

/** A copy with `dir`'s bytes [from, to) removed; chunks shrink and shift to match. */
export function withRemoved(c: Capture, d: Direction, from: number, to: number): Capture {
  const old = c.bytes[d];
  const bytes = concat([old.subarray(0, from), old.subarray(to)]);
  const cut = (x: number): number => (x <= from ? x : x >= to ? x - (to - from) : from);
  const chunks = c.index.chunks.flatMap((ch): CaptureChunk[] => {
    if (ch.dir !== d) return [ch];
    const start = cut(ch.offset);
    const end = cut(ch.offset + ch.length);
    return end > start ? [{ ...ch, offset: start, length: end - start }] : [];
  });
  return { index: { ...c.index, chunks }, bytes: { ...c.bytes, [d]: bytes } };
}

/** A copy cut after `length` bytes of `dir`, as when the recorder died: chunks and close trimmed. */
export function withTruncated(c: Capture, d: Direction, length: number): Capture {
  const r = withRemoved(c, d, length, c.bytes[d].length);
  return { index: { ...r.index, closed: (c.index.closed ?? []).filter((x) => x.dir !== d) }, bytes: r.bytes };
}
