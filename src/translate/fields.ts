import { TranslateError } from "./errors.js";

/** Protobuf wire types. */
export enum Wire {
  Varint = 0,
  Fixed64 = 1,
  Bytes = 2,
  StartGroup = 3,
  EndGroup = 4,
  Fixed32 = 5,
}

/** Largest field number protobuf allows (2^29 - 1). */
const MAX_FIELD_NUMBER = 0x1fffffff;

/**
 * A cursor over the top-level fields of one protobuf message. It reads tags and lengths only: a
 * length-delimited value is skipped by its length and never decoded. A group (wire type 3) has no
 * length, so one is walked tag by tag to its end-group tag, again without decoding values.
 * Malformed bytes raise TranslateError naming the message, the problem and its byte offset.
 */
export class FieldCursor {
  /** The current field: its number, wire type and the offsets of its tag, value and end. */
  no = 0;
  wireType = 0;
  start = 0;
  valueStart = 0;
  end = 0;
  private pos = 0;

  /** `typeName` names the message in errors (`StateChangeEvent`). */
  constructor(
    private readonly buf: Uint8Array,
    private readonly typeName: string,
  ) {}

  /** Moves to the next top-level field; false at the end of the message. */
  next(): boolean {
    if (this.pos >= this.buf.length) return false;
    const start = this.pos;
    const [no, wireType] = this.tag();
    this.start = start;
    this.no = no;
    this.wireType = wireType;
    this.valueStart = this.pos;
    if (wireType === Wire.EndGroup) this.fail(`unexpected end-group ${no} at offset ${start}`);
    this.skipValue(no, wireType, start);
    this.end = this.pos;
    return true;
  }

  /** Throws unless the current field has `wireType` (a declared field sent with another type). */
  expect(wireType: Wire): void {
    if (this.wireType !== wireType) {
      this.fail(`field ${this.no} at offset ${this.start}: wire type ${this.wireType}, want ${wireType}`);
    }
  }

  /**
   * The current varint field as an int32: its low 32 bits, signed, as protobuf reads an enum.
   * Call only after expect(Wire.Varint); the bytes were checked by next().
   */
  int32(): number {
    const b = this.buf;
    let v = 0;
    for (let i = this.valueStart, shift = 0; shift < 35; i++, shift += 7) {
      const byte = b[i]!;
      v |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
    return v | 0;
  }

  fail(reason: string): never {
    throw new TranslateError(`translate: invalid ${this.typeName}: ${reason}`);
  }

  /** A tag: field number (checked to be 1..2^29-1) and wire type. */
  private tag(): [number, number] {
    const at = this.pos;
    const tag = this.varint();
    const no = Math.floor(tag / 8);
    if (no < 1 || no > MAX_FIELD_NUMBER) this.fail(`invalid field number ${no} at offset ${at}`);
    return [no, tag % 8];
  }

  /** A varint as a double (exact below 2^53, which covers every tag and length that fits). */
  private varint(): number {
    const b = this.buf;
    const at = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      const byte = b[this.pos++];
      if (byte === undefined) return this.fail(`truncated varint at offset ${at}`);
      // Ten bytes hold 64 bits: a tenth byte above 1 (continuation bit included) overflows them.
      if (i === 9 && byte > 1) return this.fail(`varint overflows 64 bits at offset ${at}`);
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  }

  private advance(no: number, at: number, n: number, what: string): void {
    if (n > this.buf.length - this.pos) {
      this.fail(`field ${no} at offset ${at}: ${what} past the end of ${this.buf.length} bytes`);
    }
    this.pos += n;
  }

  /** Skips the value of a field whose tag, at `at`, has just been read. */
  private skipValue(no: number, wireType: number, at: number): void {
    switch (wireType) {
      case Wire.Varint:
        this.varint();
        return;
      case Wire.Fixed64:
        this.advance(no, at, 8, "fixed64");
        return;
      case Wire.Bytes: {
        const len = this.varint();
        this.advance(no, at, len, `length ${len}`);
        return;
      }
      case Wire.Fixed32:
        this.advance(no, at, 4, "fixed32");
        return;
      case Wire.StartGroup:
        this.skipGroup(no, at);
        return;
      default:
        this.fail(`invalid wire type ${wireType} at offset ${at}`);
    }
  }

  /** Skips a group's fields up to its matching end-group tag, iteratively (no recursion limit to hit). */
  private skipGroup(no: number, at: number): void {
    const open: number[] = [no];
    while (open.length > 0) {
      if (this.pos >= this.buf.length) this.fail(`field ${no} at offset ${at}: unterminated group`);
      const innerAt = this.pos;
      const [innerNo, innerType] = this.tag();
      if (innerType === Wire.StartGroup) {
        open.push(innerNo);
      } else if (innerType === Wire.EndGroup) {
        const expected = open.pop();
        if (innerNo !== expected) {
          this.fail(`field ${no} at offset ${at}: end-group ${innerNo} at offset ${innerAt} closes group ${expected}`);
        }
      } else {
        this.skipValue(innerNo, innerType, innerAt);
      }
    }
  }
}
