/**
 * NRI's removal markers: a key, path, destination or namespace type prefixed with `-` asks to
 * remove that entry; an owner record `-P` says plugin P removed the field.
 */

/** The key without its marker and whether it had one (`""` is never marked). */
export function unmarkRemoval(key: string): [key: string, marked: boolean] {
  if (key.length > 0 && key.charCodeAt(0) === 0x2d) return [key.slice(1), true];
  return [key, false];
}

/** `key` marked for removal. */
export function markRemoval(key: string): string {
  return `-${key}`;
}
