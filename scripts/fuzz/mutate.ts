import { split } from "../../test/support/bytes.js";
import type { Rng } from "./rng.js";
import { copyOf } from "./target.js";

/**
 * Mutations of valid inputs. Generic ones (bit flips, truncation, insertions, deletions,
 * duplications, splices, random bytes) work on any bytes; protobuf-aware ones find the fields of
 * an encoded message (nested ones too) and break exactly one thing: a wire type, a length pushed
 * past the end or to 2^32 - 1 and beyond, a varint made huge or overlong, a field number 0, an
 * unknown field or an unbalanced group.
 */

/** One field found in encoded protobuf bytes; for length-delimited fields `lenStart` starts the length. */
export interface Site {
  readonly tagStart: number;
  readonly tagEnd: number;
  readonly wire: number;
  readonly valueStart: number;
  readonly valueEnd: number;
}

function readVarint(b: Uint8Array, pos: number, end: number): [number, number] | undefined {
  let v = 0;
  for (let shift = 0; shift < 70 && pos < end; shift += 7) {
    const byte = b[pos++]!;
    v += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [v, pos];
  }
  return undefined;
}

/** The fields of `b[start, end)` up to the first malformed one, and those of nested messages. */
export function protoSites(b: Uint8Array, start = 0, end = b.length, depth = 0, out: Site[] = []): Site[] {
  let pos = start;
  while (pos < end) {
    const tag = readVarint(b, pos, end);
    if (tag === undefined || tag[0] < 8) return out;
    const wire = tag[0] % 8;
    const tagEnd = tag[1];
    let valueStart = tagEnd;
    let valueEnd: number;
    if (wire === 0) {
      const v = readVarint(b, tagEnd, end);
      if (v === undefined) return out;
      valueEnd = v[1];
    } else if (wire === 1) valueEnd = tagEnd + 8;
    else if (wire === 5) valueEnd = tagEnd + 4;
    else if (wire === 2) {
      const len = readVarint(b, tagEnd, end);
      if (len === undefined) return out;
      valueStart = len[1];
      valueEnd = valueStart + len[0];
    } else return out;
    if (valueEnd > end) return out;
    out.push({ tagStart: pos, tagEnd, wire, valueStart, valueEnd });
    if (wire === 2 && depth < 3 && valueEnd > valueStart) {
      const before = out.length;
      protoSites(b, valueStart, valueEnd, depth + 1, out);
      // Keep nested fields only when the value parsed as a message to its last byte.
      const last = out[out.length - 1];
      if (out.length > before && last !== undefined && last.valueEnd !== valueEnd) out.length = before;
    }
    pos = valueEnd;
  }
  return out;
}

/** `v` as a protobuf varint (any value up to 2^64 - 1). */
export function varint(v: bigint | number): Uint8Array {
  let x = BigInt(v);
  const out: number[] = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Uint8Array.from(out);
}

/** `b` with `[start, end)` replaced by `repl`. */
export function splice(b: Uint8Array, start: number, end: number, repl: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length - (end - start) + repl.length);
  out.set(b.subarray(0, start));
  out.set(repl, start);
  out.set(b.subarray(end), start + repl.length);
  return out;
}

/** Varints no decoder should take quietly: 2^64 - 1, past 64 bits, overlong, unterminated, 2^32 - 1, past 32 bits. */
const HUGE_VARINTS: readonly Uint8Array[] = [
  Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
  Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
  Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00),
  Uint8Array.of(0x80, 0x80, 0x80),
  Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f),
  Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x1f),
  Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
];

/** Lengths to announce for a value that has `left` bytes after it. */
function badLength(rng: Rng, left: number): bigint {
  return rng.pick<() => bigint>([
    () => BigInt(left + 1),
    () => BigInt(left + 1 + rng.int(1 << 20)),
    () => 0x7fffffffn,
    () => 0x80000000n,
    () => 0xffffffffn,
    () => 1n << 32n,
    () => (1n << 64n) - 1n,
    () => BigInt(rng.u32()),
  ])();
}

/** One protobuf-aware mutation of `b`, or undefined when no field was found. */
export function mutateProto(rng: Rng, b: Uint8Array): Uint8Array | undefined {
  const sites = protoSites(b);
  if (sites.length === 0) return undefined;
  const s = rng.pick(sites);
  switch (rng.int(7)) {
    case 0: {
      // A wire type other than the field's, 3, 4, 6 and 7 included.
      const tag = readVarint(b, s.tagStart, s.tagEnd)![0];
      const wire = (s.wire + 1 + rng.int(7)) % 8;
      return splice(b, s.tagStart, s.tagEnd, varint(tag - s.wire + wire));
    }
    case 1: {
      if (s.wire !== 2) return splice(b, s.tagEnd, s.valueEnd, rng.pick(HUGE_VARINTS));
      return splice(b, s.tagEnd, s.valueStart, varint(badLength(rng, b.length - s.valueStart)));
    }
    case 2: {
      // A huge varint in place of the tag, a varint value or a length.
      const at = rng.chance(0.5) || s.wire === 1 || s.wire === 5 ? [s.tagStart, s.tagEnd] : [s.tagEnd, s.wire === 2 ? s.valueStart : s.valueEnd];
      return splice(b, at[0]!, at[1]!, rng.pick(HUGE_VARINTS));
    }
    case 3:
      // Field number 0 with the field's wire type.
      return splice(b, s.tagStart, s.tagEnd, Uint8Array.of(s.wire));
    case 4: {
      // An unknown field, possibly malformed, before this one.
      const no = rng.pick([15, 100, 1000, 536870911, 1 + rng.int(50)]);
      const wire = rng.int(8);
      const body = rng.pick([new Uint8Array(0), rng.bytes(rng.int(12)), rng.pick(HUGE_VARINTS), varint(rng.u32())]);
      const field = new Uint8Array([...varint(no * 8 + wire), ...body]);
      return splice(b, s.tagStart, s.tagStart, field);
    }
    case 5: {
      // A group around this field, its end tag missing or of another number.
      const no = 1 + rng.int(20);
      const start = varint(no * 8 + 3);
      const end = rng.pick([new Uint8Array(0), varint(no * 8 + 4), varint((no + 1) * 8 + 4)]);
      return splice(b, s.tagStart, s.valueEnd, new Uint8Array([...start, ...b.subarray(s.tagStart, s.valueEnd), ...end]));
    }
    default:
      // The value cut in the middle, the enclosing lengths left as they were.
      return splice(b, s.valueStart + rng.int(Math.max(1, s.valueEnd - s.valueStart)), s.valueEnd, new Uint8Array(0));
  }
}

const INTERESTING = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12];

/** One generic mutation of `b`; `corpus` supplies splice partners. */
export function mutateBytes(rng: Rng, b: Uint8Array, corpus: readonly Uint8Array[]): Uint8Array {
  const n = b.length;
  switch (rng.int(8)) {
    case 0: {
      const out = copyOf(b);
      const flips = 1 + rng.int(8);
      for (let i = 0; i < flips && n > 0; i++) out[rng.int(n)]! ^= 1 << rng.int(8);
      return out;
    }
    case 1:
      return b.subarray(0, rng.int(n + 1));
    case 2: {
      const out = copyOf(b);
      if (n > 0) out[rng.int(n)] = rng.pick(INTERESTING);
      return out;
    }
    case 3: {
      const at = rng.int(n + 1);
      return splice(b, at, at, rng.bytes(1 + rng.int(16)));
    }
    case 4: {
      const at = rng.int(n + 1);
      return splice(b, at, Math.min(n, at + 1 + rng.int(16)), new Uint8Array(0));
    }
    case 5: {
      const at = rng.int(n + 1);
      const end = Math.min(n, at + 1 + rng.int(64));
      return splice(b, end, end, b.subarray(at, end));
    }
    case 6: {
      const other = rng.pick(corpus);
      return splice(b, rng.int(n + 1), n, other.subarray(rng.int(other.length + 1)));
    }
    default:
      return rng.bytes(rng.int(rng.chance(0.9) ? 64 : 2048));
  }
}

/** A valid input mutated 0 to 4 times, protobuf-aware mutations about half of the time. */
export function mutate(rng: Rng, seed: Uint8Array, corpus: readonly Uint8Array[], proto: boolean): Uint8Array {
  let b = seed;
  const rounds = rng.chance(0.05) ? 0 : 1 + rng.int(4);
  for (let i = 0; i < rounds; i++) {
    const p = proto && rng.chance(0.5) ? mutateProto(rng, b) : undefined;
    b = p ?? mutateBytes(rng, b, corpus);
  }
  return b;
}

/** `b` cut into chunks: whole, byte by byte (or, past 1 KiB, in runs of 1 to 64 bytes), or at 1 to 8 random points. */
export function randomChunks(rng: Rng, b: Uint8Array): Uint8Array[] {
  const mode = rng.int(4);
  if (mode === 0) return [b];
  if (mode === 1) {
    if (b.length <= 1024) return Array.from(b, (x) => Uint8Array.of(x));
    const out: Uint8Array[] = [];
    for (let at = 0; at < b.length; ) {
      const end = Math.min(b.length, at + 1 + rng.int(64));
      out.push(b.subarray(at, end));
      at = end;
    }
    return out;
  }
  const k = 1 + rng.int(8);
  return split(b, Array.from({ length: k }, () => rng.int(b.length + 1)));
}
