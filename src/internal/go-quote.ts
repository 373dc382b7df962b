/**
 * Go's `%q` for strings (`strconv.Quote`): the texts we must match quote plugin names, keys and
 * annotation values that way, including its escapes for control and non-printable characters.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (isGoPrint(ch, cp)) out += ch;
    else out += escapeRune(cp);
  }
  return `${out}"`;
}

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const GRAPHIC = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

function isGoPrint(ch: string, cp: number): boolean {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f;
  // A lone surrogate reaches Go as U+FFFD (UTF-8 encoding replaces it), which is printable.
  if (cp >= 0xd800 && cp <= 0xdfff) return false;
  return GRAPHIC.test(ch);
}

const SHORT: Readonly<Record<number, string>> = { 7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v" };

function escapeRune(cp: number): string {
  const short = SHORT[cp];
  if (short !== undefined) return short;
  if (cp >= 0xd800 && cp <= 0xdfff) return "\ufffd";
  if (cp < 0x20 || cp === 0x7f) return `\\x${hex(cp, 2)}`;
  if (cp > 0xffff) return `\\U${hex(cp, 8)}`;
  return `\\u${hex(cp, 4)}`;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}
