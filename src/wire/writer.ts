/**
 * Protobuf wire primitives: each `write*` puts a value at `pos` and returns the position after
 * it; each `*Size` is the number of bytes a value takes. Generated encoders write in one pass
 * into a shared scratch buffer (scratchBuffer), reserving a byte for each nested length
 * (closeLength), and copy the encoding out (takeEncoding).
 */

import type { UnknownField } from "@bufbuild/protobuf";
import { utf8Length, writeUtf8 } from "./utf8.js";

const TWO_32 = 4294967296;

const f64 = new DataView(new ArrayBuffer(8));

/** Bytes of a varint holding an unsigned 32-bit value. */
export function varint32Size(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Bytes of an int32 (negative values are sign-extended to 10 bytes). */
export function int32Size(v: number): number {
  return v < 0 ? 10 : varint32Size(v);
}

/** Writes an unsigned 32-bit varint. */
export function writeVarint32(buf: Uint8Array, pos: number, v: number): number {
  while (v > 0x7f) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Writes an int32 (negative values as 10-byte two's complement). */
export function writeInt32(buf: Uint8Array, pos: number, v: number): number {
  if (v >= 0) return writeVarint32(buf, pos, v);
  return writeVarint64(buf, pos, v >>> 0, 0xffffffff);
}

/** Writes the 64-bit varint whose halves are `lo` and `hi` (both unsigned 32-bit). */
export function writeVarint64(buf: Uint8Array, pos: number, lo: number, hi: number): number {
  if (hi === 0) return writeVarint32(buf, pos, lo);
  for (let i = 0; i < 4; i++) {
    buf[pos++] = (lo & 0x7f) | 0x80;
    lo >>>= 7;
  }
  // Byte 4 holds the top 4 bits of lo and the low 3 of hi.
  let x = lo | ((hi & 0x7) << 4);
  hi >>>= 3;
  if (hi === 0) {
    buf[pos++] = x;
    return pos;
  }
  buf[pos++] = x | 0x80;
  while (hi > 0x7f) {
    buf[pos++] = (hi & 0x7f) | 0x80;
    hi >>>= 7;
  }
  buf[pos++] = hi;
  return pos;
}

function varint64Size(lo: number, hi: number): number {
  if (hi === 0) return varint32Size(lo);
  return hi < 0x8 ? 5 : hi < 0x400 ? 6 : hi < 0x20000 ? 7 : hi < 0x1000000 ? 8 : hi < 0x80000000 ? 9 : 10;
}

/** A 64-bit integer as protobuf-es holds it (bigint, or a decimal string under jstype). */
export type Int64 = bigint | string | number;

let lo64 = 0;
let hi64 = 0;

/** Splits `v` into lo64/hi64, two's complement; exact for every int64 and uint64. */
function split64(v: Int64): void {
  if (typeof v === "bigint" && v >= 0n && v <= 0xffffffffn) {
    lo64 = Number(v);
    hi64 = 0;
    return;
  }
  if (typeof v === "number") {
    if (v >= 0 && v < TWO_32) {
      lo64 = v >>> 0;
      hi64 = 0;
      return;
    }
    v = BigInt(v);
  } else if (typeof v === "string") v = BigInt(v);
  if (v >= 0n && v < 0x20000000000000n) {
    const n = Number(v);
    lo64 = n >>> 0;
    hi64 = Math.floor(n / TWO_32);
  } else if (v < 0n && v > -0x20000000000000n) {
    const n = Number(v);
    const h = Math.floor(n / TWO_32);
    lo64 = (n - h * TWO_32) >>> 0;
    hi64 = h >>> 0;
  } else {
    const u = BigInt.asUintN(64, v);
    lo64 = Number(u & 0xffffffffn);
    hi64 = Number(u >> 32n);
  }
}

/** Bytes of an int64 or uint64 varint. */
export function int64Size(v: Int64): number {
  if (typeof v === "bigint" && v >= 0n && v < 0x80n) return 1;
  split64(v);
  return varint64Size(lo64, hi64);
}

/** Writes an int64 or uint64 varint. */
export function writeInt64(buf: Uint8Array, pos: number, v: Int64): number {
  if (typeof v === "bigint" && v >= 0n && v < 0x80n) {
    buf[pos] = Number(v);
    return pos + 1;
  }
  split64(v);
  return writeVarint64(buf, pos, lo64, hi64);
}

function zigzag64(v: Int64): bigint {
  const b = BigInt.asIntN(64, typeof v === "bigint" ? v : BigInt(v));
  return BigInt.asUintN(64, (b << 1n) ^ (b >> 63n));
}

/** Writes a sint64 (zigzag) varint. */
export function writeSint64(buf: Uint8Array, pos: number, v: Int64): number {
  return writeInt64(buf, pos, zigzag64(v));
}

/** The zigzag form of a sint32. */
export function zigzag32(v: number): number {
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

/** Writes 4 bytes little-endian (fixed32, sfixed32). */
export function writeFixed32(buf: Uint8Array, pos: number, v: number): number {
  buf[pos] = v & 0xff;
  buf[pos + 1] = (v >>> 8) & 0xff;
  buf[pos + 2] = (v >>> 16) & 0xff;
  buf[pos + 3] = (v >>> 24) & 0xff;
  return pos + 4;
}

/** Writes 8 bytes little-endian (fixed64, sfixed64). */
export function writeFixed64(buf: Uint8Array, pos: number, v: Int64): number {
  split64(v);
  const hi = hi64;
  pos = writeFixed32(buf, pos, lo64);
  return writeFixed32(buf, pos, hi);
}

/** Writes `v` as a float (four little-endian bytes) at `pos`; returns the position after it. */
export function writeFloat(buf: Uint8Array, pos: number, v: number): number {
  f64.setFloat32(0, v, true);
  for (let i = 0; i < 4; i++) buf[pos + i] = f64.getUint8(i);
  return pos + 4;
}

/** Writes `v` as a double (eight little-endian bytes) at `pos`; returns the position after it. */
export function writeDouble(buf: Uint8Array, pos: number, v: number): number {
  f64.setFloat64(0, v, true);
  for (let i = 0; i < 8; i++) buf[pos + i] = f64.getUint8(i);
  return pos + 8;
}

/** Writes `bytes` as they are. */
export function writeBytes(buf: Uint8Array, pos: number, bytes: Uint8Array): number {
  const n = bytes.length;
  if (n < 32) for (let i = 0; i < n; i++) buf[pos + i] = bytes[i]!;
  else if (pos + n <= buf.length) buf.set(bytes, pos);
  return pos + n;
}

/**
 * Writes a string value: its length, then its UTF-8 in place. A string of fewer than 43 UTF-16
 * units has at most 126 bytes of UTF-8, so its length takes one byte, reserved before the
 * characters are written; ASCII is written as it is read, anything else natively. A longer
 * string is measured first.
 */
export function writeString(buf: Uint8Array, pos: number, v: string): number {
  const n = v.length;
  if (n < 43) {
    const at = pos++;
    for (let i = 0; i < n; i++) {
      const c = v.charCodeAt(i);
      if (c >= 0x80) return writeShortUtf8(buf, at, v);
      buf[pos++] = c;
    }
    buf[at] = n;
    return pos;
  }
  const l = utf8Length(v);
  pos = writeVarint32(buf, pos, l);
  // Past the end of the buffer (an encoder's first try) only the position counts.
  return pos + l > buf.length ? pos + l : writeUtf8(buf, pos, v, l);
}

/** A short string that is not ASCII: its length in the byte at `at`, its UTF-8 after it. */
function writeShortUtf8(buf: Uint8Array, at: number, v: string): number {
  const l = utf8Length(v);
  buf[at] = l;
  return at + 1 + l > buf.length ? at + 1 + l : writeUtf8(buf, at + 1, v, l);
}

/**
 * Ends a length-delimited value whose length byte was reserved at `at` and whose content runs
 * from `at + 1` to `end`: writes the length, moving the content up when the length takes more
 * than one byte. Returns the position after the value.
 */
export function closeLength(buf: Uint8Array, at: number, end: number): number {
  const l = end - at - 1;
  if (l < 0x80) {
    buf[at] = l;
    return end;
  }
  const k = varint32Size(l);
  if (end + k - 1 <= buf.length) {
    buf.copyWithin(at + k, at + 1, end);
    writeVarint32(buf, at, l);
  }
  return end + k - 1;
}

/** Writes a bytes value: its length, then the bytes. */
export function writeLengthBytes(buf: Uint8Array, pos: number, v: Uint8Array): number {
  pos = writeVarint32(buf, pos, v.length);
  return writeBytes(buf, pos, v);
}

/** Writes unknown fields after the known ones, where protobuf-es writes them. */
export function writeUnknown(buf: Uint8Array, pos: number, u: readonly UnknownField[]): number {
  for (let i = 0; i < u.length; i++) {
    const f = u[i]!;
    pos = writeVarint32(buf, pos, (f.no * 8 + f.wireType) >>> 0);
    pos = writeBytes(buf, pos, f.data);
  }
  return pos;
}

/** Encodings up to this size are carved from a shared slab. */
const SLAB_MAX = 16 * 1024;
const SLAB_SIZE = 128 * 1024;
let slab = new ArrayBuffer(SLAB_SIZE);
let slabUsed = 0;

/**
 * A new zero-filled array of `n` bytes. Small ones are views of a shared slab, because
 * allocating an ArrayBuffer per message costs more than encoding most of them; like Node's
 * pooled Buffers, such a view's `.buffer` holds other encodings too (copy before transferring).
 */
export function allocate(n: number): Uint8Array {
  if (n > SLAB_MAX) return new Uint8Array(n);
  if (slabUsed + n > SLAB_SIZE) {
    slab = new ArrayBuffer(SLAB_SIZE);
    slabUsed = 0;
  }
  const out = new Uint8Array(slab, slabUsed, n);
  // Keep views 8-byte aligned, so a consumer's typed-array views of them stay legal.
  slabUsed = (slabUsed + n + 7) & ~7;
  return out;
}

/** The largest scratch buffer kept between encodings: 1 MiB. */
const SCRATCH_MAX = 1024 * 1024;
let scratch = new Uint8Array(16 * 1024);

/**
 * Where an encoder writes: the shared scratch buffer, grown to hold `min` bytes (by doubling, up
 * to 1 MiB; a larger encoding gets a buffer of its own). Writes past its end are dropped but
 * still advance the position, so an encoder that ends past it knows the size to ask for. Encoding
 * is synchronous and never re-entered, so one buffer serves every encoder.
 */
export function scratchBuffer(min: number): Uint8Array {
  if (min <= scratch.length) return scratch;
  if (min > SCRATCH_MAX) return new Uint8Array(min);
  let n = scratch.length * 2;
  while (n < min) n *= 2;
  scratch = new Uint8Array(n);
  return scratch;
}

/** The encoding written to `buf` up to `end`, as an array of its own (see allocate). */
export function takeEncoding(buf: Uint8Array, end: number): Uint8Array {
  if (buf !== scratch && end === buf.length) return buf;
  const out = allocate(end);
  if (end < 32) for (let i = 0; i < end; i++) out[i] = buf[i]!;
  else out.set(buf.subarray(0, end));
  return out;
}
