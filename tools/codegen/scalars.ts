import { ScalarType } from "@bufbuild/protobuf";

/** Whether `t` is one of the 64-bit integer types (held as bigint, or string under jstype = JS_STRING). */
export function is64Bit(t: ScalarType): boolean {
  switch (t) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return true;
    default:
      return false;
  }
}

/**
 * How the generated code handles one scalar type: wire type, fixed size, write, read and zero. In the
 * snippets, `@{name}` is a helper of the wire runtime module (the emitter turns it into an import).
 */
export interface ScalarCode {
  readonly wireType: 0 | 1 | 2 | 5;
  /** Fixed encoded size, or undefined when it depends on the value. */
  readonly fixed: number | undefined;
  /** Statement writing `v` at `pos` and advancing it. */
  write(v: string): string;
  /** Expression reading a value from reader `r`. */
  read: string;
  /** The zero value as protobuf-es holds it. */
  zero: string;
  /**
   * Condition under which an implicit-presence field holding `v` is written: whatever is not
   * the zero value, exactly as protobuf-es `toBinary` decides (so -0.0 is written).
   */
  isSet(v: string): string;
}

const varint = (write: string, read: string, zero: string, isSet = (v: string) => v): ScalarCode => ({
  wireType: 0,
  fixed: undefined,
  write: (v) => write.replace(/\$v/g, () => v),
  read,
  zero,
  isSet,
});

const int64Set = (long: boolean) => (v: string) => (long ? `${v} && ${v} !== "0"` : v);

/** The code for `type`; `long` is true under jstype = JS_STRING (64-bit values as strings). */
export function scalarCode(type: ScalarType, long: boolean): ScalarCode {
  const toLong = (read: string) => (long ? `String(${read})` : read);
  const zero64 = long ? `"0"` : "0n";
  switch (type) {
    case ScalarType.INT32:
      return varint("pos = @{writeInt32}(buf, pos, $v);", "r.int32()", "0");
    case ScalarType.UINT32:
      return varint("pos = @{writeVarint32}(buf, pos, $v);", "r.uint32()", "0");
    case ScalarType.SINT32:
      return varint("pos = @{writeVarint32}(buf, pos, @{zigzag32}($v));", "r.sint32()", "0");
    case ScalarType.INT64:
      return varint("pos = @{writeInt64}(buf, pos, $v);", toLong("r.int64()"), zero64, int64Set(long));
    case ScalarType.UINT64:
      return varint("pos = @{writeInt64}(buf, pos, $v);", toLong("r.uint64()"), zero64, int64Set(long));
    case ScalarType.SINT64:
      return varint("pos = @{writeSint64}(buf, pos, $v);", toLong("r.sint64()"), zero64, int64Set(long));
    case ScalarType.BOOL:
      return varint("buf[pos++] = $v ? 1 : 0;", "r.bool()", "false");
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return {
        wireType: 5,
        fixed: 4,
        write: (v) => `pos = @{writeFixed32}(buf, pos, ${v});`,
        read: type === ScalarType.FIXED32 ? "r.fixed32()" : "r.sfixed32()",
        zero: "0",
        isSet: (v) => v,
      };
    case ScalarType.FLOAT:
      return {
        wireType: 5,
        fixed: 4,
        write: (v) => `pos = @{writeFloat}(buf, pos, ${v});`,
        read: "r.float()",
        zero: "0",
        isSet: (v) => `${v} !== undefined && !Object.is(${v}, 0)`,
      };
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return {
        wireType: 1,
        fixed: 8,
        write: (v) => `pos = @{writeFixed64}(buf, pos, ${v});`,
        read: toLong(type === ScalarType.FIXED64 ? "r.fixed64()" : "r.sfixed64()"),
        zero: zero64,
        isSet: int64Set(long),
      };
    case ScalarType.DOUBLE:
      return {
        wireType: 1,
        fixed: 8,
        write: (v) => `pos = @{writeDouble}(buf, pos, ${v});`,
        read: "r.double()",
        zero: "0",
        isSet: (v) => `${v} !== undefined && !Object.is(${v}, 0)`,
      };
    case ScalarType.STRING:
      return {
        wireType: 2,
        fixed: undefined,
        write: () => {
          throw new Error("protoc-gen-nri-wire: strings are written by the emitter");
        },
        read: "r.string()",
        zero: `""`,
        isSet: (v) => v,
      };
    case ScalarType.BYTES:
      return {
        wireType: 2,
        fixed: undefined,
        write: () => {
          throw new Error("protoc-gen-nri-wire: bytes are written by the emitter");
        },
        read: "r.bytes()",
        zero: "new Uint8Array(0)",
        isSet: (v) => `${v} !== undefined && ${v}.length !== 0`,
      };
  }
}

/** The bytes of the varint for `tag`, as `0x..` literals. */
export function tagBytes(no: number, wireType: number): string[] {
  let v = (no * 8 + wireType) >>> 0;
  const out: string[] = [];
  while (v > 0x7f) {
    out.push(`0x${((v & 0x7f) | 0x80).toString(16)}`);
    v >>>= 7;
  }
  out.push(`0x${v.toString(16)}`);
  return out;
}

/** The tag value (`number << 3 | wire type`) as the decoder's switch sees it. */
export function tagValue(no: number, wireType: number): number {
  return (no * 8 + wireType) >>> 0;
}
