import { ProtocolError } from "./errors.js";

/**
 * The few protobuf wire primitives the ttrpc envelope needs, hand-written because the envelope
 * is on the hot path of every call. The generated types in gen/ttrpc are the reference the
 * tests compare these against.
 */

const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/** Encoded size of a varint holding an unsigned 32-bit value. */
export function varint32Size(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/**
 * `v` as an int64. Past ±2^53 a number is inexact and near 2^63 it rounds to 2^63 itself, which
 * as two's complement would wrap to the most negative value: clamp to the int64 range instead.
 */
function int64Of(v: number): bigint {
  const x = BigInt(v);
  return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : x;
}

/** Encoded size of an int64 varint for an integer (negative values take 10 bytes). */
export function varint64Size(v: number): number {
  if (v >= 0 && v <= 0xffffffff) return varint32Size(v);
  if (v < 0) return 10;
  let x = int64Of(v);
  let n = 1;
  while (x >= 0x80n) {
    x >>= 7n;
    n++;
  }
  return n;
}

/** Writes an unsigned 32-bit varint at `pos`; returns the new position. */
export function writeVarint32(buf: Uint8Array, pos: number, v: number): number {
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Writes a safe integer as an int64 varint (two's complement for negatives). */
export function writeVarint64(buf: Uint8Array, pos: number, v: number): number {
  if (v >= 0 && v <= 0xffffffff) return writeVarint32(buf, pos, v);
  // Rare: timeouts past 4.29 s in nanoseconds, or already-passed deadlines.
  let x = BigInt.asUintN(64, int64Of(v));
  while (x >= 0x80n) {
    buf[pos++] = Number(x & 0x7fn) | 0x80;
    x >>= 7n;
  }
  buf[pos++] = Number(x);
  return pos;
}

/** Byte length of a string in UTF-8. */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2;
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}

/** Writes a string as UTF-8; `len` must be utf8Length(s). */
export function writeUtf8(buf: Uint8Array, pos: number, s: string, len: number): number {
  if (len === s.length) {
    for (let i = 0; i < len; i++) buf[pos + i] = s.charCodeAt(i);
    return pos + len;
  }
  utf8Encoder.encodeInto(s, buf.subarray(pos, pos + len));
  return pos + len;
}

/**
 * A cursor over the protobuf bytes `buf[start, end)` that throws ProtocolError naming what was
 * wrong and where (offsets and sizes relative to `start`). Reading a range in place spares the
 * caller a view of it.
 */
export class Reader {
  pos: number;
  readonly end: number;
  constructor(
    readonly buf: Uint8Array,
    readonly what: string,
    readonly start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  fail(reason: string): never {
    throw new ProtocolError(`ttrpc: invalid ${this.what}: ${reason} at offset ${this.pos - this.start}`);
  }

  /** An unsigned varint that must fit 32 bits (tags and lengths). */
  uint32(): number {
    const b = this.buf;
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) this.fail("truncated varint");
      const byte = b[this.pos++]!;
      if (shift === 28 && byte > 0x0f) this.fail("varint overflows 32 bits");
      result += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return result;
    }
    return this.fail("varint overflows 32 bits");
  }

  /** An int64 varint as a number (exact within ±2^53, the range of any real timeout). */
  int64(): number {
    const b = this.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail("truncated varint");
      const byte = b[this.pos++]!;
      if (i < 4) lo |= (byte & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (byte & 0x0f) << 28;
        hi |= (byte & 0x7f) >> 4;
      } else hi |= (byte & 0x7f) << (7 * i - 32);
      // The tenth byte holds bit 63 only; more is past 64 bits, which protobuf-go refuses.
      if (i === 9 && byte > 1) this.fail("varint overflows 64 bits");
      if (byte < 0x80) {
        lo >>>= 0;
        return hi | 0 ? (hi | 0) * 0x100000000 + lo : lo;
      }
    }
    return this.fail("varint longer than 10 bytes");
  }

  /** int32 as encoded by protobuf (negative values use 10-byte varints). */
  int32(): number {
    return this.int64() | 0;
  }

  bytes(): Uint8Array {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > this.end) this.fail(`length ${len} past the end of ${this.end - this.start} bytes`);
    const v = this.buf.subarray(this.pos, end);
    this.pos = end;
    return v;
  }

  string(): string {
    const len = this.uint32();
    const start = this.pos;
    const end = start + len;
    const b = this.buf;
    if (end > this.end) this.fail(`length ${len} past the end of ${this.end - this.start} bytes`);
    this.pos = end;
    if (len < 64) {
      let ascii = true;
      for (let i = start; i < end; i++) {
        if (b[i]! >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) return String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
    }
    try {
      return utf8Decoder.decode(b.subarray(start, end));
    } catch {
      this.pos = start;
      return this.fail("invalid UTF-8 in string");
    }
  }

  /** Skips the value of a field of an unknown number (or a known one of the wrong wire type). */
  skip(wireType: number, field = 0): void {
    switch (wireType) {
      case 3: {
        // A group: skip fields up to its matching end-group tag.
        for (;;) {
          if (this.done) this.fail(`unterminated group ${field}`);
          const tag = this.uint32();
          if ((tag & 7) === 4) {
            if (tag >>> 3 !== field) this.fail(`end of group ${tag >>> 3} inside group ${field}`);
            return;
          }
          this.skip(tag & 7, tag >>> 3);
        }
      }
      case 0:
        this.int64();
        return;
      case 1:
        this.advance(8);
        return;
      case 2:
        this.advance(this.uint32());
        return;
      case 5:
        this.advance(4);
        return;
      default:
        this.fail(`unsupported wire type ${wireType}`);
    }
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) this.fail(`field of ${n} bytes past the end of ${this.end - this.start} bytes`);
    this.pos += n;
  }

  /**
   * Whether a known field has the expected wire type. One that does not is skipped as an unknown
   * field, as protobuf-go (the reference) does; false tells the caller to ignore it.
   */
  expect(tag: number, wireType: number): boolean {
    if ((tag & 7) === wireType) return true;
    this.skip(tag & 7, tag >>> 3);
    return false;
  }
}
