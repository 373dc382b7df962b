import { MAX_READ_PAYLOAD, MUX_HEADER_LENGTH } from "../mux/trunk-frame.js";
import { DEFAULT_MAX_DATA_LENGTH, HEADER_LENGTH } from "../ttrpc/frame.js";
import { readUint32BE } from "../internal/bytes.js";

/*
 * Framing for tools that read recorded or proxied NRI bytes. The endpoints' decoders (MuxDecoder,
 * FrameDecoder) stop at the first bad byte, which is right for a live connection; a decoder of a
 * damaged capture must instead report the damage with its byte offset, find the next frame that
 * makes sense and go on. A candidate is accepted only if the bytes after it make sense too: for
 * the mux, the frame after it has a plausible header; for ttrpc, its body decodes.
 */

/** A byte buffer consumed from the front, addressed by absolute position in its stream. */
class ByteRun {
  private buf = new Uint8Array(4096);
  private head = 0;
  private tail = 0;
  /** Absolute position of the first byte held. */
  start = 0;

  /** Absolute position just past the last byte held. */
  get end(): number {
    return this.start + this.tail - this.head;
  }

  append(bytes: Uint8Array): void {
    if (this.tail + bytes.length > this.buf.length) {
      const held = this.tail - this.head;
      if (held + bytes.length <= this.buf.length) this.buf.copyWithin(0, this.head, this.tail);
      else {
        const next = new Uint8Array((held + bytes.length) * 2);
        next.set(this.buf.subarray(this.head, this.tail));
        this.buf = next;
      }
      this.head = 0;
      this.tail = held;
    }
    this.buf.set(bytes, this.tail);
    this.tail += bytes.length;
  }

  byte(pos: number): number {
    return this.buf[this.head + pos - this.start]!;
  }

  u32(pos: number): number {
    const i = this.head + pos - this.start;
    const b = this.buf;
    return readUint32BE(b, i);
  }

  /** Bytes [from, to) as a view, valid until the next append. */
  view(from: number, to: number): Uint8Array {
    return this.buf.subarray(this.head + from - this.start, this.head + to - this.start);
  }

  /** Drops every byte before `pos`. */
  consume(pos: number): void {
    this.head += pos - this.start;
    this.start = pos;
    if (this.head === this.tail) this.head = this.tail = 0;
  }
}

/**
 * What both scanners share: the bytes pushed so far, or all of them when known in advance
 * (`whole`), and the resynchronization after damage: from the byte after the damage, find the
 * next position where `candidate` accepts a frame.
 */
abstract class Resync {
  protected readonly run = new ByteRun();
  protected ended = false;
  protected scanning = false;
  protected scanPos = 0;
  protected resyncAt = -1;
  protected errorAt = 0;
  protected errorReason = "";

  constructor(
    private readonly headerLength: number,
    protected readonly whole: Uint8Array | undefined,
  ) {}

  /** Whether a good frame starts at `p`: true, false, or undefined while the bytes that tell are missing. */
  protected abstract candidate(p: number): boolean | undefined;

  /** Where the frame at `r` ends if it is acceptable as a link of a chain ending at `end`, else -1. */
  protected abstract link(r: number, end: number): number;

  /** Where the bytes are known to end, or undefined while more may come. */
  protected get knownEnd(): number | undefined {
    return this.whole !== undefined ? this.whole.length : this.ended ? this.run.end : undefined;
  }

  /** Bytes known so far, from the buffer or the whole direction. */
  protected get known(): number {
    return this.whole?.length ?? this.run.end;
  }

  protected u32(pos: number): number {
    if (pos + 4 <= this.run.end) return this.run.u32(pos);
    const w = this.whole!;
    return readUint32BE(w, pos);
  }

  protected byte(pos: number): number {
    return pos < this.run.end ? this.run.byte(pos) : this.whole![pos]!;
  }

  protected bytes(from: number, to: number): Uint8Array {
    return to <= this.run.end ? this.run.view(from, to) : this.whole!.subarray(from, to);
  }

  /** The next candidate from `from`: its position, -1 if none, undefined to wait for bytes. */
  protected findFrame(from: number): number | undefined {
    for (let p = from; p + this.headerLength <= this.known; p++) {
      const ok = this.candidate(p);
      if (ok === true) return p;
      if (ok === undefined) {
        this.scanPos = p;
        return undefined;
      }
    }
    if (this.knownEnd !== undefined) return -1;
    this.scanPos = Math.max(from, this.known - this.headerLength + 1);
    return undefined;
  }

  /**
   * A good frame inside the extent a frame at `at` claims, up to `end`, given the whole bytes:
   * with `anyFrame` the first candidate inside; else the first position from which linked frames
   * chain exactly to `end` (the frame's length may have been damaged into another's end). -1 if none.
   */
  protected frameInside(at: number, end: number, anyFrame: boolean): number {
    if (anyFrame) {
      const inside = this.findFrame(at + 1);
      return inside !== undefined && inside >= 0 && inside < end ? inside : -1;
    }
    for (let q = at + 1; q + this.headerLength <= end; q++) {
      let r = q;
      while (r + this.headerLength <= end) {
        const next = this.link(r, end);
        if (next < 0) break;
        r = next;
      }
      if (r === end && r !== q) return q;
    }
    return -1;
  }

  /** Resyncs after damage; true when done, false when more bytes are needed. */
  protected abstract scan(): boolean;

  /** Reads on while no damage is found; false when more bytes are needed. */
  protected abstract read(): boolean;

  /** Works through the bytes held until more are needed. */
  protected step(): void {
    for (;;) if (!(this.scanning ? this.scan() : this.read())) return;
  }

  /** Damage at `at`: scanning for the next good frame starts after it. */
  protected startScan(at: number, reason: string): void {
    this.scanning = true;
    this.errorAt = at;
    this.scanPos = at + 1;
    this.resyncAt = -1;
    this.errorReason = reason;
  }

  /** Where scanning resumes: a position, -1 if no good frame is left, undefined to wait for bytes. */
  protected resync(): number | undefined {
    if (this.resyncAt < 0) {
      const p = this.findFrame(this.scanPos);
      if (p === undefined) return undefined;
      if (p < 0) {
        this.scanPos = Math.max(this.scanPos, this.known - this.headerLength + 1);
        return -1;
      }
      this.resyncAt = p;
    }
    return this.resyncAt;
  }
}

/** Damage found in a byte stream: where, what, and how many bytes were skipped to get past it. */
export interface FramingError {
  /** Absolute offset in the direction's byte stream (the capture's .bin file). */
  readonly offset: number;
  readonly message: string;
  readonly skipped: number;
}

/** Receives what a TrunkScanner finds. */
export interface TrunkSink {
  /** Payload bytes of conn `connId`, the first of them at `offset` of the direction's stream. */
  data(connId: number, bytes: Uint8Array, offset: number): void;
  error(e: FramingError): void;
}

/**
 * The mux layer of one direction of a recorded trunk. Payload bytes are handed on as they arrive.
 * A header naming a conn id other than 1 or 2, or a length over the limit, is damage: the scanner
 * skips to the next position holding a plausible header followed by another plausible header
 * (or the end of the bytes) and reports how many bytes it skipped. When the whole direction is
 * known in advance (a capture on disk: `whole`), a header is also damage when a good frame starts
 * inside the extent it claims, so a damaged length cannot swallow the frames after it.
 */
export class TrunkScanner extends Resync {
  private pos = 0;
  private connId = 0;
  private left = 0;
  private frameStart = 0;
  private frameLength = 0;

  constructor(
    private readonly sink: TrunkSink,
    private readonly maxPayload: number = MAX_READ_PAYLOAD,
    whole?: Uint8Array,
  ) {
    super(MUX_HEADER_LENGTH, whole);
  }

  push(chunk: Uint8Array): void {
    this.run.append(chunk);
    this.step();
  }

  /** The end of the direction's bytes: resolves a scan in progress and reports a cut-short frame. */
  end(): void {
    this.ended = true;
    this.step();
    const total = this.run.end;
    if (this.scanning) {
      this.report(total, true);
    } else if (this.left > 0) {
      this.sink.error({
        offset: this.frameStart,
        message: `mux: truncated frame at offset ${this.frameStart}: ended after ${this.frameLength - this.left} of ${this.frameLength} payload bytes for conn ${this.connId}`,
        skipped: 0,
      });
      this.left = 0;
    } else if (total > this.pos) {
      this.sink.error({
        offset: this.pos,
        message: `mux: truncated frame at offset ${this.pos}: ended after ${total - this.pos} of ${MUX_HEADER_LENGTH} header bytes`,
        skipped: total - this.pos,
      });
    }
    this.run.consume(total);
    this.pos = total;
  }

  private plausible(connId: number, length: number): boolean {
    return (connId === 1 || connId === 2) && length <= this.maxPayload;
  }

  /**
   * Whether the frame at `p` is followed by a plausible header or the end: true, false, or
   * undefined when the bytes that would tell have not arrived.
   */
  private chained(p: number): boolean | undefined {
    const next = p + MUX_HEADER_LENGTH + this.u32(p + 4);
    const end = this.knownEnd;
    if (next === end) return true;
    if (next + MUX_HEADER_LENGTH <= this.known) return this.plausible(this.u32(next), this.u32(next + 4));
    return end === undefined ? undefined : false;
  }

  /** A candidate for the mux: a plausible header of a non-empty frame, chained to the next. */
  protected candidate(p: number): boolean | undefined {
    const length = this.u32(p + 4);
    if (length === 0 || !this.plausible(this.u32(p), length)) return false;
    return this.chained(p);
  }

  /**
   * Why a frame at `p` claiming `length` bytes is damaged, given the whole direction: a good
   * frame starts inside the extent it claims. When the frame does not end at a plausible header,
   * any chained frame inside counts (else the damage lies after it, or the capture was cut
   * short); when it does, only frames chaining exactly to that header count, since its length
   * may have been damaged into another frame's end.
   */
  private overreach(p: number, length: number): string | undefined {
    const inside = this.frameInside(p, p + MUX_HEADER_LENGTH + length, this.chained(p) === false);
    return inside < 0 ? undefined : `length ${length} runs past the frame at offset ${inside}`;
  }

  /** A link of a chain: any plausible header of a non-empty frame. */
  protected link(r: number): number {
    const n = this.u32(r + 4);
    return n === 0 || !this.plausible(this.u32(r), n) ? -1 : r + MUX_HEADER_LENGTH + n;
  }

  /** Reads on from `pos` by one step; false when more bytes are needed. */
  protected read(): boolean {
    const run = this.run;
    if (this.left > 0) {
      const k = Math.min(this.left, run.end - this.pos);
      if (k === 0) return false;
      this.sink.data(this.connId, run.view(this.pos, this.pos + k), this.pos);
      this.pos += k;
      this.left -= k;
      run.consume(this.pos);
      return true;
    }
    if (run.end - this.pos < MUX_HEADER_LENGTH) return false;
    const connId = run.u32(this.pos);
    const length = run.u32(this.pos + 4);
    let problem: string | undefined;
    if (connId !== 1 && connId !== 2) problem = `conn id ${connId} is not 1 or 2`;
    else if (length > this.maxPayload) problem = `length ${length} exceeds maximum ${this.maxPayload}`;
    else if (this.whole !== undefined) problem = this.overreach(this.pos, length);
    if (problem !== undefined) {
      this.startScan(this.pos, problem);
      return true;
    }
    this.frameStart = this.pos;
    this.frameLength = this.left = length;
    this.connId = connId;
    this.pos += MUX_HEADER_LENGTH;
    run.consume(this.pos);
    return true;
  }

  /** Looks for the next good header; true when scanning ended, false when it needs more bytes. */
  protected scan(): boolean {
    const p = this.resync();
    if (p === undefined) return false;
    if (p < 0) {
      if (!this.ended) return false;
      this.report(this.run.end, true);
      this.pos = this.run.end;
      this.run.consume(this.pos);
      return true;
    }
    // With the whole direction known the frame may lie ahead of the bytes pushed so far.
    if (this.run.end < p) return false;
    this.report(p, false);
    this.pos = p;
    this.run.consume(this.pos);
    return true;
  }

  private report(to: number, atEnd: boolean): void {
    const skipped = to - this.errorAt;
    const where = atEnd ? "to the end" : `to the next frame at offset ${to}`;
    this.sink.error({
      offset: this.errorAt,
      message: `mux: invalid frame header at offset ${this.errorAt}: ${this.errorReason}: skipped ${skipped} bytes ${where}`,
      skipped,
    });
    this.scanning = false;
  }
}

/** One ttrpc frame found by a FrameScanner; `body` is a view valid only during the callback. */
export interface ScannedFrame {
  /** Offset of the frame's first header byte in the direction's byte stream. */
  readonly offset: number;
  readonly streamId: number;
  readonly type: number;
  readonly flags: number;
  readonly body: Uint8Array;
}

/** Receives what a FrameScanner finds. */
export interface FrameSink {
  /** Why the body of a frame of `type` is not acceptable, or undefined when it is. */
  validate(type: number, body: Uint8Array): string | undefined;
  frame(f: ScannedFrame): void;
  error(e: FramingError): void;
}

const FRAME_TYPES = ["", "request", "response", "data"];

/**
 * The ttrpc layer of one connection in one direction, fed the conn's bytes as the TrunkScanner
 * finds them. A header with an unknown type, unknown flags, stream id 0 or a length over the
 * limit, or a body that does not decode, is damage: the scanner skips to the next position whose
 * header is plausible (odd stream id) and whose body decodes, and reports what it skipped. When
 * the conn's bytes are known in advance (`whole`), a frame must also end where a plausible
 * header or the end follows, unless no good frame starts inside the extent it claims: so a
 * damaged length cannot swallow the frames after it.
 */
export class FrameScanner extends Resync {
  /** (stream position, direction offset, length) of every piece of bytes held. */
  private pieces: number[] = [];
  private pos = 0;
  private errorWhat = "";

  constructor(
    private readonly connId: number,
    private readonly sink: FrameSink,
    private readonly maxDataLength: number = DEFAULT_MAX_DATA_LENGTH,
    whole?: Uint8Array,
  ) {
    super(HEADER_LENGTH, whole);
  }

  /** Conn bytes, the first of them at `offset` of the direction's stream. */
  push(bytes: Uint8Array, offset: number): void {
    const at = this.run.end;
    const n = this.pieces.length;
    if (n > 0 && this.pieces[n - 3]! + this.pieces[n - 1]! === at && this.pieces[n - 2]! + this.pieces[n - 1]! === offset) {
      this.pieces[n - 1]! += bytes.length;
    } else this.pieces.push(at, offset, bytes.length);
    this.run.append(bytes);
    this.step();
  }

  /**
   * The end of the conn's bytes. A frame cut short is reported, then the bytes it claimed are
   * scanned for good frames: its length may be what was damaged.
   */
  end(): void {
    this.ended = true;
    for (;;) {
      this.step();
      const total = this.run.end;
      if (this.scanning) {
        this.report(total, true);
        this.consume(total);
        return;
      }
      const have = total - this.pos;
      if (have <= 0) return;
      if (have < HEADER_LENGTH) this.startFrameScan(this.pos, "truncated frame", `ended after ${have} of ${HEADER_LENGTH} header bytes`);
      else {
        const what = `truncated frame of stream ${this.run.u32(this.pos + 4)}`;
        this.startFrameScan(this.pos, what, `ended after ${have - HEADER_LENGTH} of ${this.run.u32(this.pos)} data bytes`);
      }
    }
  }

  /** The direction offset of stream position `pos` (or of the last byte before it). */
  private fileOffset(pos: number): number {
    const p = this.pieces;
    for (let i = 0; i < p.length; i += 3) {
      if (pos < p[i]! + p[i + 2]! || i + 3 === p.length) return p[i + 1]! + Math.max(0, pos - p[i]!);
    }
    return 0;
  }

  private consume(pos: number): void {
    this.pos = pos;
    this.run.consume(pos);
    let drop = 0;
    while (drop + 3 < this.pieces.length && this.pieces[drop]! + this.pieces[drop + 2]! <= pos) drop += 3;
    if (drop > 0) this.pieces = this.pieces.slice(drop);
  }

  private headerProblem(at: number, strict: boolean): string | undefined {
    const length = this.u32(at);
    const streamId = this.u32(at + 4);
    const type = this.byte(at + 8);
    const flags = this.byte(at + 9);
    if (type < 1 || type > 3) return `type ${type}`;
    if ((flags & ~7) !== 0) return `flags 0x${flags.toString(16)}`;
    if (length > this.maxDataLength) return `length ${length} exceeds maximum ${this.maxDataLength}`;
    if (streamId === 0) return "stream id 0";
    // Candidates found by scanning must look like NRI traffic: client streams have odd ids.
    if (strict && streamId % 2 === 0) return "even stream id";
    return undefined;
  }

  /** A good frame at `p`: plausible header and a body that decodes. Undefined: bytes not here yet. */
  protected candidate(p: number): boolean | undefined {
    if (this.headerProblem(p, true) !== undefined) return false;
    const end = p + HEADER_LENGTH + this.u32(p);
    if (end > this.known) return this.knownEnd === undefined ? undefined : false;
    return this.sink.validate(this.byte(p + 8), this.bytes(p + HEADER_LENGTH, end)) === undefined;
  }

  /**
   * Whether the frame at `at` ending at `end` claims bytes that hold good frames, given the
   * conn's whole bytes: any good frame inside when no plausible header follows it, else good
   * frames chaining exactly to its end (its length may have been damaged into another's end).
   */
  private overreach(at: number, end: number): boolean {
    const total = this.whole!.length;
    return this.frameInside(at, end, end !== total && (end + HEADER_LENGTH > total || this.headerProblem(end, false) !== undefined)) >= 0;
  }

  /** A link of a chain: a good frame that ends by `end`. */
  protected link(r: number, end: number): number {
    const next = r + HEADER_LENGTH + this.u32(r);
    return next <= end && this.candidate(r) === true ? next : -1;
  }

  /** Reads on from `pos` by one step; false when more bytes are needed. */
  protected read(): boolean {
    const run = this.run;
    if (run.end - this.pos < HEADER_LENGTH) return false;
    const at = this.pos;
    const problem = this.headerProblem(at, false);
    if (problem !== undefined) {
      this.startFrameScan(at, "invalid frame header", problem);
      return true;
    }
    const length = run.u32(at);
    const end = at + HEADER_LENGTH + length;
    if (this.whole !== undefined && this.overreach(at, end)) {
      this.startFrameScan(at, `invalid frame of stream ${run.u32(at + 4)}`, `length ${length} runs past a good frame`);
      return true;
    }
    if (run.end < end) return false;
    const type = run.byte(at + 8);
    const streamId = run.u32(at + 4);
    const body = run.view(at + HEADER_LENGTH, end);
    const invalid = this.sink.validate(type, body);
    if (invalid !== undefined) {
      this.startFrameScan(at, `invalid ${FRAME_TYPES[type]} of stream ${streamId}`, invalid);
      return true;
    }
    this.sink.frame({ offset: this.fileOffset(at), streamId, type, flags: run.byte(at + 9), body });
    this.consume(end);
    return true;
  }

  private startFrameScan(at: number, what: string, detail: string): void {
    this.startScan(at, detail);
    this.errorWhat = what;
  }

  /** True when scanning ended (resynced or ran to the end), false when it needs more bytes. */
  protected scan(): boolean {
    const p = this.resync();
    // None left: the end() loop reports the rest as skipped to the end.
    if (p === undefined || p < 0) return false;
    // Wait for the frame's first byte too, so its offset in the direction is known.
    if (this.run.end <= p) return false;
    this.report(p, false);
    this.consume(p);
    return true;
  }

  private report(to: number, atEnd: boolean): void {
    const skipped = to - this.errorAt;
    const offset = this.fileOffset(this.errorAt);
    const where = atEnd ? "to the end" : `to the next frame at offset ${this.fileOffset(to)}`;
    this.sink.error({
      offset,
      message: `ttrpc: ${this.errorWhat} at offset ${offset} on conn ${this.connId}: ${this.errorReason}: skipped ${skipped} bytes ${where}`,
      skipped,
    });
    this.scanning = false;
  }
}
