import type { Writable } from "node:stream";
import { HEADER_LENGTH, writeHeader } from "./frame.js";

const STAGING_SIZE = 64 * 1024;
const NO_STAGING: Uint8Array = Buffer.alloc(0);
/** Payloads at least this big are written as their own part instead of being copied. */
export const ZERO_COPY_THRESHOLD = 32 * 1024;
/** Staged bytes past which a flush happens at once rather than once the microtask queue is empty. */
const FLUSH_THRESHOLD = 256 * 1024;

/**
 * Batches frames into few writes without delaying a lone one: frames are encoded straight into
 * a staging buffer and large payloads are queued by reference. The first frame of a burst (what
 * one callback and the promise continuations it sets off queue) is written at once; the rest of
 * the burst goes out together once the microtask queue is empty (one writev on a socket; over a
 * mux connection, one trunk write per part, since the mux copies each part into its own frames
 * anyway). A call or an answer, the common case, thus never waits for a scheduled flush, and a
 * burst of many costs two writes.
 */
export class FrameWriter {
  private buf: Uint8Array = Buffer.allocUnsafe(STAGING_SIZE);
  private start = 0;
  private pos = 0;
  private parts: Uint8Array[] = [];
  private queued = 0;
  /**
   * Writes handed to the sink whose callbacks have not run. Once none is left the sink is done
   * with every part it was given, and the staging buffer starts over at its front instead of a new
   * one being allocated when it is full: a staging buffer that lived long enough to be promoted
   * kept its 64 KiB until the next full collection.
   */
  private writing = 0;
  private readonly written = (): void => {
    this.writing--;
  };
  private closed = false;
  /** Whether a burst is open: its first frame went out at once, the rest wait for its end. */
  private burst = false;
  private readonly endBurst = (): void => {
    this.burst = false;
    this.flush();
  };
  // A tick queued from a microtask runs once the microtask queue is empty: frames that promise
  // continuations queue after the first (a handler's answer, a call made after an await) join
  // the burst.
  private readonly endBurstAfterMicrotasks = (): void => {
    process.nextTick(this.endBurst);
  };

  constructor(
    private readonly sink: Writable,
    /** Told after each write to the sink (busy polling). */
    private readonly wrote: () => void = () => undefined,
  ) {}

  /** Whether the socket has more unwritten data than its high-water mark. */
  get congested(): boolean {
    return this.sink.writableNeedDrain;
  }

  /**
   * Starts a frame of `dataLength` data bytes and reserves `inlineLength` bytes of `buffer` from
   * the returned position for the caller to write; end(pos, tail) then appends the rest of the
   * data, `tail`, which is not copied when large.
   */
  begin(streamId: number, type: number, flags: number, dataLength: number, inlineLength: number): number {
    const need = HEADER_LENGTH + inlineLength;
    // Everything staged has been written and the sink is done with it: start over at the front.
    if (this.writing === 0 && this.start === this.pos && this.parts.length === 0) this.start = this.pos = 0;
    if (this.buf.length - this.pos < need) this.grow(need);
    return writeHeader(this.buf, this.pos, dataLength, streamId, type, flags);
  }

  /**
   * Starts a frame made of a `headLength`-byte head, written by the caller from the returned
   * position, followed by `payload`; finish it with `end(endOfHead, payload)`. Space for a small
   * payload is reserved with the head so the frame stays in one piece.
   */
  beginWithPayload(streamId: number, type: number, flags: number, headLength: number, payload: Uint8Array): number {
    const inline = payload.length >= ZERO_COPY_THRESHOLD ? headLength : headLength + payload.length;
    return this.begin(streamId, type, flags, headLength + payload.length, inline);
  }

  /** The staging buffer that begin()'s position refers to. */
  get buffer(): Uint8Array {
    return this.buf;
  }

  /** Ends the inline part of a frame at `pos` and appends `tail` after it. */
  end(pos: number, tail?: Uint8Array): void {
    this.queued += pos - this.pos;
    this.pos = pos;
    if (tail !== undefined && tail.length > 0) {
      if (tail.length >= ZERO_COPY_THRESHOLD) {
        this.seal();
        this.parts.push(tail);
      } else {
        if (this.buf.length - this.pos < tail.length) this.grow(tail.length);
        this.buf.set(tail, this.pos);
        this.pos += tail.length;
      }
      this.queued += tail.length;
    }
    if (this.closed) {
      this.drop();
      return;
    }
    if (this.queued >= FLUSH_THRESHOLD) this.flush();
    else if (!this.burst) {
      this.burst = true;
      queueMicrotask(this.endBurstAfterMicrotasks);
      this.flush();
    }
  }

  /** Writes everything queued. */
  flush(): void {
    this.seal();
    const parts = this.parts;
    if (parts.length === 0 || this.closed) return;
    this.parts = [];
    this.queued = 0;
    this.writing += parts.length;
    if (parts.length === 1) this.sink.write(parts[0]!, this.written);
    else {
      this.sink.cork();
      for (const p of parts) this.sink.write(p, this.written);
      this.sink.uncork();
    }
    this.wrote();
  }

  /**
   * Discards whatever is queued and refuses further frames (the socket is gone or being
   * destroyed); a graceful end flushes first.
   */
  close(): void {
    this.closed = true;
    this.drop();
    // A closed connection may be referenced for long (its `closed` reason): keep no staging buffer.
    this.buf = NO_STAGING;
    this.start = this.pos = 0;
  }

  private drop(): void {
    this.parts = [];
    this.queued = 0;
    this.start = this.pos;
  }

  private seal(): void {
    if (this.pos > this.start) {
      this.parts.push(this.buf.subarray(this.start, this.pos));
      this.start = this.pos;
    }
  }

  private grow(need: number): void {
    this.seal();
    this.buf = Buffer.allocUnsafe(Math.max(STAGING_SIZE, need));
    this.start = 0;
    this.pos = 0;
  }
}
