/**
 * Where the Go runtime ranges over a map its order is random; we go in one stable order instead:
 * ascending Unicode code points (the byte order of the UTF-8 keys Go holds). This decides which
 * of several conflicting keys is reported, the order of removal markers appended together, and
 * the order of joined names in the default validator's texts.
 */
export function goMapKeys(map: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(map).sort(compareCodePoints);
}

/** The keys of a Set or Map in the same order as `goMapKeys`. */
export function sortedKeys(keys: Iterable<string>): string[] {
  return [...keys].sort(compareCodePoints);
}

/** Code-point order on UTF-16 strings: surrogate pairs (≥ U+10000) sort after U+E000..U+FFFF. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixup(x) - fixup(y);
  }
  return a.length - b.length;
}

function fixup(u: number): number {
  if (u >= 0xd800 && u <= 0xdfff) return u + 0x2000;
  if (u >= 0xe000) return u - 0x800;
  return u;
}
