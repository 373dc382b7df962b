/** The big-endian unsigned 32-bit integer at `b[i..i+4]` (the ttrpc and mux headers' byte order). */
export function readUint32BE(b: Uint8Array, i: number): number {
  return ((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0;
}
