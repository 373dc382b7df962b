import { MuxError } from "./errors.js";
import { readUint32BE } from "../internal/bytes.js";

/** Bytes in a mux frame header: conn id (u32 BE) and payload length (u32 BE). */
export const MUX_HEADER_LENGTH = 8;

/**
 * Largest payload one mux frame is written with. The reference hands each mux frame whole to one
 * read of its ttrpc reader's 4096-byte buffer, and that read fails (ENOMEM), ending the
 * connection, when the frame is bigger.
 */
export const MAX_WRITE_PAYLOAD = 4096;

/** Largest payload accepted in a frame read: a whole ttrpc frame (10 + 4 MiB), as the reference allows. */
export const MAX_READ_PAYLOAD = 10 + (4 << 20);

/** A run of one connection's bytes; `data` is a view into the chunk it arrived in. */
export interface MuxSegment {
  readonly connId: number;
  readonly data: Uint8Array;
}

/**
 * Push decoder for the trunk. Connections are byte streams, so a frame's payload is handed on
 * as it arrives (views, never copies) without waiting for the frame to complete; only the 8-byte
 * header is ever buffered. A frame over the limit leaves the trunk unframed for good: the decoder
 * then stays failed, every later decode() and end() throwing the same MuxError.
 */
export class MuxDecoder {
  private readonly header = new Uint8Array(MUX_HEADER_LENGTH);
  private headerFill = 0;
  private connId = 0;
  private left = 0;
  private frameLength = 0;
  private failure: MuxError | undefined;

  constructor(readonly maxPayload: number = MAX_READ_PAYLOAD) {}

  /** Whether the decoder sits between frames. */
  get idle(): boolean {
    return this.headerFill === 0 && this.left === 0;
  }

  /** The connection bytes in `input`, in order; throws MuxError on a frame over the limit. */
  decode(input: Uint8Array): MuxSegment[] {
    if (this.failure !== undefined) throw this.failure;
    const out: MuxSegment[] = [];
    const n = input.length;
    let off = 0;
    while (off < n) {
      if (this.left > 0) {
        const k = Math.min(this.left, n - off);
        out.push({ connId: this.connId, data: input.subarray(off, off + k) });
        this.left -= k;
        off += k;
        continue;
      }
      const h = this.header;
      const k = Math.min(MUX_HEADER_LENGTH - this.headerFill, n - off);
      for (let i = 0; i < k; i++) h[this.headerFill + i] = input[off + i]!;
      this.headerFill += k;
      off += k;
      if (this.headerFill < MUX_HEADER_LENGTH) break;
      this.headerFill = 0;
      this.connId = readUint32BE(h, 0);
      const length = readUint32BE(h, 4);
      if (length > this.maxPayload) {
        throw (this.failure = new MuxError(`mux: frame length ${length} for conn ${this.connId} exceeds maximum ${this.maxPayload}`));
      }
      this.left = this.frameLength = length;
    }
    return out;
  }

  /** Call at end of the trunk: throws MuxError if a frame was cut short. */
  end(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.headerFill > 0) {
      throw new MuxError(`mux: truncated frame: trunk ended after ${this.headerFill} of ${MUX_HEADER_LENGTH} header bytes`);
    }
    if (this.left > 0) {
      throw new MuxError(
        `mux: truncated frame: trunk ended after ${this.frameLength - this.left} of ${this.frameLength} payload bytes for conn ${this.connId}`,
      );
    }
  }
}

/**
 * Encodes `data` for connection `connId` as mux frames of at most `maxPayload` bytes each, into
 * one new buffer (one trunk write). Empty data gives no frames.
 *
 * The buffer has memory of its own, not a slice of Node's shared pool (`Buffer.allocUnsafe` below
 * half of `Buffer.poolSize`, 64 KiB on Node 26): a pool lives as long as its last slice and as
 * long as it is the current one, so under events back to back some pools outlived two young
 * collections, were promoted, and kept their 64 KiB until the next full collection; that was most
 * of the ArrayBuffer memory a plugin held at its peak (docs/performance.md, Memory).
 */
export function encodeMuxFrames(connId: number, data: Uint8Array, maxPayload: number = MAX_WRITE_PAYLOAD): Uint8Array {
  const frames = Math.ceil(data.length / maxPayload);
  const out = Buffer.allocUnsafeSlow(data.length + frames * MUX_HEADER_LENGTH);
  let pos = 0;
  for (let off = 0; off < data.length; off += maxPayload) {
    const size = Math.min(maxPayload, data.length - off);
    out.writeUInt32BE(connId, pos);
    out.writeUInt32BE(size, pos + 4);
    out.set(data.subarray(off, off + size), pos + MUX_HEADER_LENGTH);
    pos += MUX_HEADER_LENGTH + size;
  }
  return out;
}
