import fc from "fast-check";
import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { concat } from "../support/bytes.js";

/**
 * Valid but non-canonical encodings: the same message written the way other encoders (or none
 * at all) may write it. Every field of every nested message may be moved out of order, repeated,
 * written unpacked where the schema packs it (or packed in two runs), with varints padded to
 * non-minimal length, and map entries written value first. protobuf decoders must accept all of
 * it; decoding it must give what decoding the same bytes with protobuf-es gives.
 */

/** A deterministic source of choices, so a failing case replays from its seed. */
export type Choose = (n: number) => number;

function chooser(seed: number): Choose {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n) | 0;
  };
}

interface Rec {
  no: number;
  wireType: WireType;
  /** The value's bytes after the tag (for length-delimited values: without the length). */
  body: Uint8Array;
}

function records(bytes: Uint8Array): Rec[] {
  const r = new BinaryReader(bytes);
  const out: Rec[] = [];
  while (r.pos < r.len) {
    const [no, wireType] = r.tag();
    const raw = r.skip(wireType, no);
    if (wireType === WireType.LengthDelimited) {
      const inner = new BinaryReader(raw);
      const len = inner.uint32();
      out.push({ no, wireType, body: raw.subarray(raw.length - len) });
    } else out.push({ no, wireType, body: raw });
  }
  return out;
}

function tag(no: number, wireType: WireType): Uint8Array {
  return new BinaryWriter().tag(no, wireType).finish();
}

function lengthDelimited(no: number, body: Uint8Array): Uint8Array {
  return concat([tag(no, WireType.LengthDelimited), new BinaryWriter().uint32(body.length).finish(), body]);
}

/** A varint re-written with up to `extra` continuation bytes of padding (at most 10 bytes). */
function padVarint(v: Uint8Array, extra: number): Uint8Array {
  const room = 10 - v.length;
  const n = Math.min(room, extra);
  if (n <= 0) return v;
  const out = new Uint8Array(v.length + n);
  out.set(v);
  out[v.length - 1]! |= 0x80;
  for (let i = 0; i < n - 1; i++) out[v.length + i] = 0x80;
  out[v.length + n - 1] = 0;
  return out;
}

const packable = (t: ScalarType): boolean => t !== ScalarType.STRING && t !== ScalarType.BYTES;

function scalarWireType(t: ScalarType): WireType {
  switch (t) {
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WireType.Bit64;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return WireType.Bit32;
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return WireType.LengthDelimited;
    default:
      return WireType.Varint;
  }
}

/** The elements of a packed run, each as raw bytes of its wire type. */
function unpack(body: Uint8Array, wireType: WireType): Uint8Array[] {
  const r = new BinaryReader(body);
  const out: Uint8Array[] = [];
  while (r.pos < r.len) out.push(r.skip(wireType));
  return out;
}

function rewriteField(f: DescField | undefined, rec: Rec, choose: Choose, unknown = false): Uint8Array[] {
  if (rec.wireType === WireType.LengthDelimited) {
    if (f === undefined) return [lengthDelimited(rec.no, rec.body)];
    if (f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message")) {
      return [lengthDelimited(rec.no, rewrite(f.message!, rec.body, choose, unknown))];
    }
    if (f.fieldKind === "map") return [lengthDelimited(rec.no, rewriteEntry(f, rec.body, choose, unknown))];
    if (f.fieldKind === "list") {
      const t = f.listKind === "enum" ? ScalarType.INT32 : f.scalar;
      if (packable(t)) {
        const wt = scalarWireType(t);
        const items = unpack(rec.body, wt).map((v) => (wt === WireType.Varint ? padVarint(v, choose(3)) : v));
        switch (choose(3)) {
          case 0: // unpacked, one field per element
            return items.map((v) => concat([tag(rec.no, wt), v]));
          case 1: {
            // two packed runs
            const cut = choose(items.length + 1);
            return [lengthDelimited(rec.no, concat(items.slice(0, cut))), lengthDelimited(rec.no, concat(items.slice(cut)))];
          }
          default:
            return [lengthDelimited(rec.no, concat(items))];
        }
      }
    }
    return [lengthDelimited(rec.no, rec.body)];
  }
  // Unknown varints are kept byte for byte by protobuf-es, so only known ones are padded.
  const body = rec.wireType === WireType.Varint && f !== undefined ? padVarint(rec.body, choose(4)) : rec.body;
  return [concat([tag(rec.no, rec.wireType), body])];
}

/** A map entry with its value rewritten when it is a message, and value first half the time. */
function rewriteEntry(f: DescField & { fieldKind: "map" }, body: Uint8Array, choose: Choose, unknown: boolean): Uint8Array {
  const parts = records(body).map((rec) => {
    if (rec.no === 2 && f.mapKind === "message" && rec.wireType === WireType.LengthDelimited) {
      return lengthDelimited(2, rewrite(f.message, rec.body, choose, unknown));
    }
    return rewriteField(undefined, rec, choose)[0]!;
  });
  if (choose(2) === 0) parts.reverse();
  return concat(parts);
}

/** An unknown field of each wire type, under a number `schema` does not declare. */
function unknownField(schema: DescMessage, choose: Choose): Uint8Array {
  let no = 1 + choose(60);
  while (schema.fields.some((f) => f.number === no)) no++;
  switch (choose(5)) {
    case 0:
      return concat([tag(no, WireType.Varint), new BinaryWriter().uint64(BigInt(choose(1 << 30)) << BigInt(choose(34))).finish()]);
    case 1:
      return concat([tag(no, WireType.Bit32), Uint8Array.of(choose(256), 0, 0, choose(256))]);
    case 2:
      return concat([tag(no, WireType.Bit64), new Uint8Array(8).fill(choose(256))]);
    case 3:
      return lengthDelimited(no, new Uint8Array(choose(5)).fill(0xff));
    default:
      return concat([tag(no, WireType.StartGroup), tag(1, WireType.Varint), Uint8Array.of(choose(128)), tag(no, WireType.EndGroup)]);
  }
}

/**
 * `bytes` of `schema`, re-encoded non-canonically (recursively) as `choose` decides; with
 * `unknown`, unknown fields of every wire type are added at every level now and then.
 */
export function rewrite(schema: DescMessage, bytes: Uint8Array, choose: Choose, unknown = false): Uint8Array {
  const parts: Uint8Array[][] = [];
  if (unknown && choose(3) === 0) parts.push([unknownField(schema, choose)]);
  for (const rec of records(bytes)) {
    const f = schema.fields.find((x) => x.number === rec.no);
    const enc = rewriteField(f, rec, choose, unknown);
    parts.push(enc);
    // Repeat a field now and then: last one wins for scalars, messages merge, lists append.
    if (choose(6) === 0) parts.push(enc);
  }
  // Shuffle whole fields (the runs of one packed field stay together, in order).
  for (let i = parts.length - 1; i > 0; i--) {
    const j = choose(i + 1);
    [parts[i], parts[j]] = [parts[j]!, parts[i]!];
  }
  return concat(parts.flat());
}

/** Non-canonical rewritings of `bytes` of `schema`, one per seed, with unknown fields or not. */
export function arbitraryRewrite(schema: DescMessage, bytes: Uint8Array, unknown = false): fc.Arbitrary<Uint8Array> {
  return fc.integer().map((seed) => rewrite(schema, bytes, chooser(seed), unknown));
}

export { chooser };
