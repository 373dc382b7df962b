import { DecodeError } from "../wire/errors.js";
import { Reader } from "../wire/reader.js";
import { WireType } from "../wire/wire-type.js";
import { TranslateError } from "./errors.js";

/**
 * A cursor over the top-level fields of one protobuf message, on the shared wire reader. It reads
 * tags and skips values: a length-delimited value is skipped by its length and never decoded, a
 * group is walked to its end-group tag. Malformed bytes raise TranslateError naming the message,
 * the problem and its byte offset.
 */
export class FieldCursor {
  /** The current field: its number, wire type and the offsets of its tag, value and end. */
  no = 0;
  wireType = 0;
  start = 0;
  valueStart = 0;
  end = 0;
  private readonly r: Reader;

  /** `typeName` names the message in errors (`StateChangeEvent`). */
  constructor(
    buf: Uint8Array,
    private readonly typeName: string,
  ) {
    this.r = new Reader(buf);
  }

  /** Moves to the next top-level field; false at the end of the message. */
  next(): boolean {
    const r = this.r;
    if (r.pos >= r.end) return false;
    const start = r.pos;
    let tag: number;
    try {
      tag = r.tag();
    } catch (e) {
      return this.failWith(e, "");
    }
    this.start = start;
    this.no = Math.floor(tag / 8);
    this.wireType = tag & 7;
    this.valueStart = r.pos;
    try {
      r.skip(tag);
    } catch (e) {
      return this.failWith(e, `field ${this.no} at offset ${start}: `);
    }
    this.end = r.pos;
    return true;
  }

  /** Throws unless the current field has `wireType` (a declared field sent with another type). */
  expect(wireType: WireType): void {
    if (this.wireType !== wireType) {
      this.fail(`field ${this.no} at offset ${this.start}: wire type ${this.wireType}, want ${wireType}`);
    }
  }

  /**
   * The current varint field as an int32: its low 32 bits, signed, as protobuf reads an enum.
   * Call only after expect(WireType.Varint); the bytes were checked by next().
   */
  int32(): number {
    const r = this.r;
    const after = r.pos;
    r.pos = this.valueStart;
    const v = r.int32();
    r.pos = after;
    return v;
  }

  fail(reason: string): never {
    throw new TranslateError(`translate: invalid ${this.typeName}: ${reason}`);
  }

  private failWith(e: unknown, context: string): never {
    if (!(e instanceof DecodeError)) throw e;
    const at = context === "" ? ` at offset ${e.offset}` : "";
    return this.fail(`${context}${e.reason}${at}`);
  }
}
