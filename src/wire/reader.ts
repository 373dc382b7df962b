import type { UnknownField } from "@bufbuild/protobuf";
import { DecodeError } from "./errors.js";
import { readUtf8 } from "./utf8.js";

/** Deepest nesting of messages (and groups) a reader accepts, as protobuf-es does by default. */
export const MAX_DEPTH = 100;

/** Largest field number protobuf allows (2^29 - 1). */
export const MAX_FIELD_NUMBER = 0x1fffffff;

const TWO_32 = 4294967296;

const f64 = new DataView(new ArrayBuffer(8));

/**
 * A cursor over protobuf bytes `buf[start, end)`, as strict as protobuf-go: every read is
 * bounded by `end`, which a nested message narrows to its own length, so nothing runs past its
 * parent; varints longer than 10 bytes or overflowing 64 bits, invalid field numbers and wire
 * types, and invalid UTF-8 are DecodeErrors. Nothing is ever allocated by a length read from
 * the input before the bytes are known to be there.
 */
export class Reader {
  pos: number;
  /** End of what may be read now: the buffer's, or the innermost length-delimited value's. */
  end: number;
  /**
   * Nesting depth: the message being read is level 1, each message entered with enter() and each
   * group skipped one more, counted as protobuf-es counts them, so both accept the same inputs.
   */
  depth = 1;
  /** High 32 bits of the last 64-bit varint, for the conversions below. */
  private hi = 0;

  constructor(
    readonly buf: Uint8Array,
    readonly start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  /** Throws a DecodeError for `reason` at offset `at`. */
  fail(reason: string, at = this.pos, field?: number): never {
    throw new DecodeError(reason, reason, at - this.start, undefined, field);
  }

  /**
   * A varint: its low 32 bits, unsigned; the high 32 bits are left in `hi`. At most 10 bytes,
   * and the tenth may only hold bit 63, as protobuf-go requires.
   */
  varint(): number {
    const b = this.buf;
    const end = this.end;
    let p = this.pos;
    if (p < end) {
      const x = b[p]!;
      if (x < 0x80) {
        this.pos = p + 1;
        this.hi = 0;
        return x;
      }
    }
    const at = p;
    let lo = 0;
    let hi = 0;
    let byte = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (p >= end) this.fail("truncated varint", at);
      byte = b[p++]!;
      lo |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.pos = p;
        this.hi = 0;
        return lo >>> 0;
      }
    }
    if (p >= end) this.fail("truncated varint", at);
    byte = b[p++]!;
    lo |= (byte & 0x0f) << 28;
    hi = (byte & 0x7f) >> 4;
    if (byte >= 0x80) {
      for (let shift = 3; ; shift += 7) {
        if (p >= end) this.fail("truncated varint", at);
        byte = b[p++]!;
        if (shift === 31) {
          if (byte > 1) this.fail("varint overflows 64 bits", at);
          hi |= byte << 31;
          break;
        }
        hi |= (byte & 0x7f) << shift;
        if (byte < 0x80) break;
      }
    }
    this.pos = p;
    this.hi = hi >>> 0;
    return lo >>> 0;
  }

  /**
   * A field tag: `number << 3 | wire type`, the number checked to be 1..2^29-1 and the wire
   * type to be one a field may start with (end-group only closes a group being skipped).
   */
  tag(): number {
    const b = this.buf;
    const p = this.pos;
    if (p < this.end) {
      const x = b[p]!;
      if (x < 0x80 && x >= 8 && (x & 7) < 6 && (x & 7) !== 4) {
        this.pos = p + 1;
        return x;
      }
    }
    return this.slowTag(true);
  }

  /**
   * A tag inside a map entry: checked as tag() does, but its errors are left to name the map
   * field rather than the entry's key or value number.
   */
  entryTag(): number {
    const p = this.pos;
    if (p < this.end) {
      const x = this.buf[p]!;
      if (x < 0x80 && x >= 8 && (x & 7) < 6 && (x & 7) !== 4) {
        this.pos = p + 1;
        return x;
      }
    }
    return this.slowTag(false);
  }

  private slowTag(attribute: boolean): number {
    const p = this.pos;
    let lo: number;
    try {
      lo = this.varint();
    } catch (e) {
      if (attribute && e instanceof DecodeError) throw new DecodeError(e.message, e.reason, e.offset, undefined, 0);
      throw e;
    }
    // Exact below 2^53; anything that large is an invalid field number either way.
    const fieldNo = Math.floor((lo + this.hi * TWO_32) / 8);
    const wireType = lo & 7;
    const field = attribute ? fieldNo : undefined;
    if (fieldNo < 1 || fieldNo > MAX_FIELD_NUMBER) this.fail(`invalid field number ${fieldNo}`, p, attribute ? 0 : undefined);
    if (wireType > 5) this.fail(`invalid wire type ${wireType}`, p, field);
    if (wireType === 4) this.fail(`unexpected end-group ${fieldNo}`, p, field);
    return lo;
  }

  /** The length of a length-delimited value, checked against what remains. */
  length(): number {
    const at = this.pos;
    const len = this.varint() + this.hi * TWO_32;
    const remaining = this.end - this.pos;
    if (len > remaining) this.fail(`length ${len} exceeds remaining ${remaining}`, at);
    return len;
  }

  /**
   * Enters a length-delimited message: reads its length, narrows `end` to it and counts the
   * depth. Returns the outer end for leave().
   */
  enter(): number {
    const len = this.length();
    if (++this.depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    const outer = this.end;
    this.end = this.pos + len;
    return outer;
  }

  /** Leaves a message entered with enter(), which the caller has read to its end. */
  leave(outer: number): void {
    this.end = outer;
    this.depth--;
  }

  /** Narrows `end` to a packed repeated field's length; returns the outer end for unlimit(). */
  limit(): number {
    const len = this.length();
    const outer = this.end;
    this.end = this.pos + len;
    return outer;
  }

  /** Restores the end saved by limit(). */
  unlimit(outer: number): void {
    this.end = outer;
  }

  /** An int32 field (a varint; negatives take ten bytes). */
  int32(): number {
    return this.varint() | 0;
  }

  /** A uint32 field (a varint). */
  uint32(): number {
    return this.varint();
  }

  /** A sint32 field (a zigzag varint). */
  sint32(): number {
    const v = this.varint();
    return (v >>> 1) ^ -(v & 1);
  }

  /** A bool field (a varint, any non-zero value true). */
  bool(): boolean {
    return this.varint() !== 0 || this.hi !== 0;
  }

  /** An int64 field (a varint). */
  int64(): bigint {
    return signed64(this.varint(), this.hi);
  }

  /** An int64 as a number: exact within ±2^53, which holds any real timeout in nanoseconds. */
  int64Number(): number {
    const lo = this.varint();
    return (this.hi | 0) * TWO_32 + lo;
  }

  /** A uint64 field (a varint). */
  uint64(): bigint {
    return unsigned64(this.varint(), this.hi);
  }

  /** A sint64 field (a zigzag varint). */
  sint64(): bigint {
    const lo = this.varint();
    const hi = this.hi;
    const sign = -(lo & 1);
    return signed64(((lo >>> 1) | (hi << 31)) ^ sign, (hi >>> 1) ^ sign);
  }

  /** A fixed32 field (four little-endian bytes). */
  fixed32(): number {
    const p = this.take(4, "fixed32");
    const b = this.buf;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }

  /** An sfixed32 field (four little-endian bytes, signed). */
  sfixed32(): number {
    return this.fixed32() | 0;
  }

  /** A fixed64 field (eight little-endian bytes). */
  fixed64(): bigint {
    const lo = this.fixed32();
    return unsigned64(lo, this.fixed32());
  }

  /** An sfixed64 field (eight little-endian bytes, signed). */
  sfixed64(): bigint {
    const lo = this.fixed32();
    return signed64(lo, this.fixed32());
  }

  /** A float field (four little-endian bytes). */
  float(): number {
    const p = this.take(4, "fixed32");
    const b = this.buf;
    for (let i = 0; i < 4; i++) f64.setUint8(i, b[p + i]!);
    return f64.getFloat32(0, true);
  }

  /** A double field (eight little-endian bytes). */
  double(): number {
    const p = this.take(8, "fixed64");
    const b = this.buf;
    for (let i = 0; i < 8; i++) f64.setUint8(i, b[p + i]!);
    return f64.getFloat64(0, true);
  }

  /** A bytes value as a view of the input, as protobuf-es returns it. */
  bytes(): Uint8Array {
    const len = this.length();
    const p = this.pos;
    this.pos = p + len;
    return this.buf.subarray(p, p + len);
  }

  /** A string field: length-prefixed UTF-8, checked. */
  string(): string {
    const at = this.pos;
    const len = this.length();
    const p = this.pos;
    this.pos = p + len;
    const s = readUtf8(this.buf, p, p + len);
    if (s === undefined) this.fail("invalid UTF-8", at);
    return s;
  }

  /** Skips the value of a field with tag `tag` (a group up to its matching end-group). */
  skip(tag: number): void {
    switch (tag & 7) {
      case 0:
        this.varint();
        return;
      case 1:
        this.take(8, "fixed64");
        return;
      case 2: {
        const len = this.length();
        this.pos += len;
        return;
      }
      case 5:
        this.take(4, "fixed32");
        return;
      case 3:
        this.skipGroup(Math.floor(tag / 8));
        return;
      default:
        this.fail(`invalid wire type ${tag & 7}`);
    }
  }

  /**
   * Skips the value of `tag` and keeps it in `message.$unknown` exactly as protobuf-es does
   * (number, wire type and the raw bytes after the tag, as a view), so it is written back
   * unchanged. Known fields of the wrong wire type come here too, as in protobuf-go.
   */
  unknown(message: { $unknown?: UnknownField[] | undefined }, tag: number): void {
    const p = this.pos;
    this.skip(tag);
    const field: UnknownField = { no: Math.floor(tag / 8), wireType: tag & 7, data: this.buf.subarray(p, this.pos) };
    if (message.$unknown === undefined) message.$unknown = [field];
    else message.$unknown.push(field);
  }

  private skipGroup(no: number): void {
    const at = this.pos;
    if (++this.depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    for (;;) {
      if (this.pos >= this.end) this.fail(`unterminated group ${no}`, at);
      const p = this.pos;
      const t = this.varint() + this.hi * TWO_32;
      const inner = Math.floor(t / 8);
      const wireType = t % 8;
      if (inner < 1 || inner > MAX_FIELD_NUMBER) this.fail(`invalid field number ${inner}`, p);
      if (wireType === 4) {
        if (inner !== no) this.fail(`end-group ${inner} closes group ${no}`, p);
        break;
      }
      if (wireType > 5) this.fail(`invalid wire type ${wireType}`, p);
      this.skip(wireType === 3 ? inner * 8 + 3 : wireType);
    }
    this.depth--;
  }

  /** Claims `n` bytes; returns where they start. */
  private take(n: number, what: string): number {
    const p = this.pos;
    if (this.end - p < n) this.fail(`${what} exceeds remaining ${this.end - p}`);
    this.pos = p + n;
    return p;
  }
}

function unsigned64(lo: number, hi: number): bigint {
  if (hi < 0x200000) return BigInt(hi * TWO_32 + lo);
  return (BigInt(hi) << 32n) | BigInt(lo);
}

function signed64(lo: number, hi: number): bigint {
  const h = hi | 0;
  if (h >= -0x200000 && h < 0x200000) return BigInt(h * TWO_32 + (lo >>> 0));
  return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
}

/**
 * Sets a map entry as protobuf-es does: by assignment, except for the key `__proto__`, which
 * must become an own property rather than replace the record's prototype.
 */
export function setOwn(record: object, key: string | number | bigint | boolean, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
  else (record as Record<string, unknown>)[key as string] = value;
}
