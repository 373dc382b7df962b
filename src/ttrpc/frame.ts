import type { FrameBudget } from "./budget.js";
import { ProtocolError, RpcError } from "./errors.js";
import { Code } from "./status.js";
import { readUint32BE } from "../internal/bytes.js";

/** Bytes in a ttrpc frame header: length (u32 BE), stream id (u32 BE), type (u8), flags (u8). */
export const HEADER_LENGTH = 10;

/** The reference limit on a frame's data: 4 MiB. */
export const DEFAULT_MAX_DATA_LENGTH = 4 << 20;

/** Frame types. */
export const MessageType = { Request: 1, Response: 2, Data: 3 } as const;

/** Frame flags; their meaning depends on the frame type. */
export const Flag = { RemoteClosed: 0x1, RemoteOpen: 0x2, NoData: 0x4 } as const;

const EMPTY: Uint8Array = new Uint8Array(0);

/**
 * Bytes first set aside for a frame split across reads. More is added as its bytes arrive
 * (doubling), so a peer that announces a large frame and stalls costs at most this much, never
 * the announced size.
 */
export const FIRST_BODY_CAPACITY = 256 << 10;

/**
 * One decoded frame. Its data is `length` bytes of `bytes` from `offset`: the chunk it arrived
 * in when the frame lay inside one chunk, or a buffer of its own when it straddled chunks.
 * `data` is that range as a view, made on first use, so a consumer that parses the range in
 * place (the envelope decoders do) never pays for one. `oversize` is 0, or the announced length
 * of a frame over the limit, whose data is skipped and never buffered (`length` is then 0).
 */
export class Frame {
  private view: Uint8Array | undefined;
  constructor(
    readonly streamId: number,
    readonly type: number,
    readonly flags: number,
    readonly bytes: Uint8Array,
    readonly offset: number,
    readonly length: number,
    readonly oversize: number,
  ) {}

  /** The frame's data as a view of `bytes` (never a copy). */
  get data(): Uint8Array {
    if (this.view === undefined) {
      this.view = this.offset === 0 && this.length === this.bytes.length ? this.bytes : this.bytes.subarray(this.offset, this.offset + this.length);
    }
    return this.view;
  }
}

/** Options of a FrameDecoder. */
export interface FrameDecoderOptions {
  /** Largest frame data accepted; larger frames are reported and skipped. Default 4 MiB. */
  maxDataLength?: number;
  /**
   * Shared count of bytes held for frames split across reads. When it refuses a reservation,
   * decode() throws RpcError RESOURCE_EXHAUSTED and the decoder stays failed. Default: none.
   */
  budget?: FrameBudget;
}

/** Validates a data-length limit option, shared by every layer that takes one. */
export function checkMaxDataLength(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_DATA_LENGTH;
  if (!Number.isSafeInteger(value) || value < 0 || value > 0xffffffff) {
    throw new RangeError(`ttrpc: maxDataLength ${value} is not an integer from 0 to 4294967295`);
  }
  return value;
}

/**
 * Push decoder for ttrpc frames: feed it socket chunks of any size, in order, and it returns
 * the frames each chunk completes. It never concatenates chunks: a frame inside one chunk is
 * handed out as a view, and only a frame split across chunks is copied, into a buffer that starts
 * at 256 KiB (or the frame's size, if smaller) and doubles as bytes arrive, copying what it holds,
 * up to the announced size (checked against the limit before any byte is buffered).
 *
 * Bytes never make decode() throw: an oversized frame is reported and skipped. Only a budget
 * refusal does (RpcError RESOURCE_EXHAUSTED), after which the decoder is failed for good: every
 * later decode() and end() throws the same error.
 */
export class FrameDecoder {
  readonly maxDataLength: number;
  private readonly budget: FrameBudget | undefined;
  private readonly header = new Uint8Array(HEADER_LENGTH);
  private headerFill = 0;
  private body: Uint8Array | null = null;
  private bodyLength = 0;
  private bodyFill = 0;
  private reserved = 0;
  private skipLeft = 0;
  private streamId = 0;
  private type = 0;
  private flags = 0;
  private failure: RpcError | undefined;
  private readonly out: Frame[] = [];

  constructor(options: FrameDecoderOptions = {}) {
    this.maxDataLength = checkMaxDataLength(options.maxDataLength);
    this.budget = options.budget;
  }

  /** Whether the decoder sits between frames (nothing partial buffered or being skipped). */
  get idle(): boolean {
    return this.headerFill === 0 && this.body === null && this.skipLeft === 0;
  }

  /** Bytes set aside for the frame being received across reads (0 between frames). */
  get buffered(): number {
    return this.body === null ? 0 : this.body.length;
  }

  /** Drops a partial frame and gives its bytes back to the budget; call when the input is abandoned. */
  dispose(): void {
    this.body = null;
    this.giveBack();
  }

  private giveBack(): void {
    if (this.reserved > 0) {
      this.budget?.release(this.reserved);
      this.reserved = 0;
    }
  }

  /** Makes room for `need` bytes of the partial frame, doubling, within the budget. */
  private grow(need: number): Uint8Array {
    const old = this.body!;
    const size = Math.min(this.bodyLength, Math.max(need, FIRST_BODY_CAPACITY, old.length * 2));
    const more = size - old.length;
    const budget = this.budget;
    if (budget !== undefined) {
      if (!budget.reserve(more)) {
        this.failure = new RpcError(
          Code.RESOURCE_EXHAUSTED,
          `ttrpc: partial-frame limit of ${budget.limit} bytes reached: ${budget.used} held, stream ${this.streamId} wants ${more} more for its frame of ${this.bodyLength} bytes`,
        );
        this.dispose();
        throw this.failure;
      }
      this.reserved += more;
    }
    const body = new Uint8Array(size);
    if (this.bodyFill > 0) body.set(old.subarray(0, this.bodyFill));
    this.body = body;
    return body;
  }

  /**
   * The frames completed by `chunk`, in order. The returned array is reused by the next call
   * (the frames themselves are not): consume it before decoding more.
   */
  decode(input: Uint8Array): Frame[] {
    if (this.failure !== undefined) throw this.failure;
    const frames = this.out;
    let count = 0;
    // Views of a plain Uint8Array are cheaper to make than views of a Node Buffer.
    const chunk = input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.length);
    const n = chunk.length;
    let off = 0;
    while (off < n) {
      if (this.skipLeft > 0) {
        const k = Math.min(this.skipLeft, n - off);
        this.skipLeft -= k;
        off += k;
        continue;
      }
      if (this.body !== null) {
        const k = Math.min(this.bodyLength - this.bodyFill, n - off);
        let body = this.body;
        if (this.bodyFill + k > body.length) body = this.grow(this.bodyFill + k);
        body.set(chunk.subarray(off, off + k), this.bodyFill);
        this.bodyFill += k;
        off += k;
        if (this.bodyFill === this.bodyLength) {
          frames[count++] = new Frame(this.streamId, this.type, this.flags, body, 0, this.bodyLength, 0);
          this.body = null;
          this.giveBack();
        }
        continue;
      }
      let length: number;
      if (this.headerFill === 0 && n - off >= HEADER_LENGTH) {
        length = readUint32BE(chunk, off);
        this.streamId = readUint32BE(chunk, off + 4);
        this.type = chunk[off + 8]!;
        this.flags = chunk[off + 9]!;
        off += HEADER_LENGTH;
      } else {
        const h = this.header;
        const k = Math.min(HEADER_LENGTH - this.headerFill, n - off);
        h.set(chunk.subarray(off, off + k), this.headerFill);
        this.headerFill += k;
        off += k;
        if (this.headerFill < HEADER_LENGTH) break;
        this.headerFill = 0;
        length = readUint32BE(h, 0);
        this.streamId = readUint32BE(h, 4);
        this.type = h[8]!;
        this.flags = h[9]!;
      }
      if (length > this.maxDataLength) {
        frames[count++] = new Frame(this.streamId, this.type, this.flags, EMPTY, 0, 0, length);
        this.skipLeft = length;
      } else if (n - off >= length) {
        frames[count++] = new Frame(this.streamId, this.type, this.flags, chunk, off, length, 0);
        off += length;
      } else {
        this.body = EMPTY;
        this.bodyLength = length;
        this.bodyFill = 0;
      }
    }
    // Truncate rather than reset up front, so the array keeps its capacity between calls.
    if (frames.length !== count) frames.length = count;
    return frames;
  }

  /** Call at end of input: throws ProtocolError if a frame was cut short. */
  end(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.headerFill > 0) {
      throw new ProtocolError(`ttrpc: truncated frame: input ended after ${this.headerFill} of ${HEADER_LENGTH} header bytes`);
    }
    if (this.body !== null) {
      throw new ProtocolError(
        `ttrpc: truncated frame: input ended after ${this.bodyFill} of ${this.bodyLength} data bytes of stream ${this.streamId}`,
      );
    }
    if (this.skipLeft > 0) {
      throw new ProtocolError(`ttrpc: truncated frame: input ended with ${this.skipLeft} bytes of an oversized frame of stream ${this.streamId} unread`);
    }
  }
}

/** Writes a frame header into `buf` at `pos`; returns the position after it. */
export function writeHeader(buf: Uint8Array, pos: number, length: number, streamId: number, type: number, flags: number): number {
  buf[pos] = length >>> 24;
  buf[pos + 1] = length >>> 16;
  buf[pos + 2] = length >>> 8;
  buf[pos + 3] = length;
  buf[pos + 4] = streamId >>> 24;
  buf[pos + 5] = streamId >>> 16;
  buf[pos + 6] = streamId >>> 8;
  buf[pos + 7] = streamId;
  buf[pos + 8] = type;
  buf[pos + 9] = flags;
  return pos + HEADER_LENGTH;
}

/** One whole frame as a new byte array (for tests and tools; connections use FrameWriter). */
export function encodeFrame(streamId: number, type: number, flags: number, data: Uint8Array = EMPTY): Uint8Array {
  const out = new Uint8Array(HEADER_LENGTH + data.length);
  writeHeader(out, 0, data.length, streamId, type, flags);
  out.set(data, HEADER_LENGTH);
  return out;
}
