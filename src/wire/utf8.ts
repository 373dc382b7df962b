/**
 * UTF-8 for protobuf strings, written and read in place. Short strings (ids, names, label
 * keys) are written, measured and read in plain JavaScript; longer ones through Node's native
 * Buffer routines, which cost a fixed call but no per-character JavaScript. Outside Node,
 * TextEncoder/TextDecoder do it.
 */

type NativeWrite = (this: Uint8Array, s: string, offset: number, length: number) => number;
type NativeSlice = (this: Uint8Array, start: number, end: number) => string;

interface BufferProto {
  latin1Write?: NativeWrite;
  utf8Write?: NativeWrite;
  utf8Slice?: NativeSlice;
}

const NodeBuffer = (globalThis as { Buffer?: { prototype: BufferProto; byteLength(s: string, enc: string): number } }).Buffer;
const latin1Write = NodeBuffer?.prototype.latin1Write;
const utf8Write = NodeBuffer?.prototype.utf8Write;
const utf8Slice = NodeBuffer?.prototype.utf8Slice;
const byteLength = NodeBuffer?.byteLength;

const encoder = new TextEncoder();
const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Strings at least this long are written natively. */
const NATIVE_WRITE = 24;
/** Strings at least this long are measured natively. */
const NATIVE_LENGTH = 12;
/** Strings longer than this are read natively. */
const NATIVE_READ = 12;

/** Byte length of `s` in UTF-8; a lone surrogate counts 3 bytes, as U+FFFD replaces it. */
export function utf8Length(s: string): number {
  const len = s.length;
  if (len >= NATIVE_LENGTH && byteLength !== undefined) return byteLength(s, "utf8");
  let n = len;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2;
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}

/** Writes `s` as UTF-8 at `pos`; `len` must be utf8Length(s). Returns the position after it. */
export function writeUtf8(buf: Uint8Array, pos: number, s: string, len: number): number {
  if (len === s.length) {
    // ASCII: any other character would have made the UTF-8 longer than the string.
    if (len < NATIVE_WRITE || latin1Write === undefined) {
      for (let i = 0; i < len; i++) buf[pos + i] = s.charCodeAt(i);
    } else latin1Write.call(buf, s, pos, len);
  } else if (utf8Write !== undefined) utf8Write.call(buf, s, pos, len);
  else encoder.encodeInto(s, buf.subarray(pos, pos + len));
  return pos + len;
}

/**
 * The text of `buf[start, end)`, or undefined when it is not valid UTF-8 (overlong forms,
 * surrogates, code points past U+10FFFF and truncated sequences are invalid, as in protobuf-go).
 */
export function readUtf8(buf: Uint8Array, start: number, end: number): string | undefined {
  const len = end - start;
  if (len <= NATIVE_READ) {
    let ascii = true;
    for (let i = start; i < end; i++) {
      if (buf[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return shortAscii(buf, start, len);
  }
  // A lenient decode replaces every invalid sequence with U+FFFD: without one, the input was
  // valid. With one, it may still be valid (an encoded U+FFFD), which the strict check tells.
  const s = utf8Slice !== undefined ? utf8Slice.call(buf, start, end) : lenientDecoder.decode(buf.subarray(start, end));
  if (s.indexOf("\uFFFD") < 0) return s;
  try {
    return fatalDecoder.decode(buf.subarray(start, end));
  } catch {
    return undefined;
  }
}

/**
 * An ASCII string of at most NATIVE_READ bytes, made from its character codes as arguments:
 * no array to spread and no call into the native slice.
 */
function shortAscii(buf: Uint8Array, p: number, len: number): string {
  switch (len) {
    case 0:
      return "";
    case 1:
      return String.fromCharCode(buf[p]!);
    case 2:
      return String.fromCharCode(buf[p]!, buf[p + 1]!);
    case 3:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!);
    case 4:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!);
    case 5:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!);
    case 6:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!, buf[p + 5]!);
    case 7:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!, buf[p + 5]!, buf[p + 6]!);
    case 8:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!, buf[p + 5]!, buf[p + 6]!, buf[p + 7]!);
    case 9:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!, buf[p + 5]!, buf[p + 6]!, buf[p + 7]!, buf[p + 8]!);
    case 10:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!, buf[p + 5]!, buf[p + 6]!, buf[p + 7]!, buf[p + 8]!, buf[p + 9]!);
    case 11:
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!, buf[p + 5]!, buf[p + 6]!, buf[p + 7]!, buf[p + 8]!, buf[p + 9]!, buf[p + 10]!);
    default: // 12, NATIVE_READ
      return String.fromCharCode(buf[p]!, buf[p + 1]!, buf[p + 2]!, buf[p + 3]!, buf[p + 4]!, buf[p + 5]!, buf[p + 6]!, buf[p + 7]!, buf[p + 8]!, buf[p + 9]!, buf[p + 10]!, buf[p + 11]!);
  }
}
