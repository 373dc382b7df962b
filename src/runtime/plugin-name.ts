import { goQuote } from "./go-quote.js";

/**
 * Plugin name and index checks with the reference's texts (pkg/api CheckPluginName,
 * CheckPluginIndex, ParsePluginName): the runtime's errors read as containerd's do.
 */

/** The error for an invalid plugin index, or undefined: exactly two ASCII digits. */
export function pluginIndexError(idx: string): string | undefined {
  // Go counts bytes: "é" is two bytes long and fails the digit check instead.
  if (Buffer.byteLength(idx, "utf8") !== 2) return `invalid plugin index ${goQuote(idx)}, must be 2 digits`;
  if (!/^[0-9]{2}$/u.test(idx)) return `invalid plugin index ${goQuote(idx)} (not [0-9][0-9])`;
  return undefined;
}

/** The error for an invalid plugin name, or undefined: non-empty, of [a-zA-Z0-9_.+-]. */
export function pluginNameError(name: string): string | undefined {
  if (name === "") return "invalid plugin name: name is empty";
  for (const ch of name) {
    if (!/^[a-zA-Z0-9_.+-]$/u.test(ch)) return `invalid plugin name ${goQuote(name)}: contains invalid character ${goQuoteRune(ch)}`;
  }
  return undefined;
}

/** Splits a pre-installed plugin's file name `NN-base` at its first dash; throws the reference's text. */
export function parsePluginFileName(file: string): { idx: string; base: string } {
  const dash = file.indexOf("-");
  if (dash < 0) throw new Error(`invalid plugin name ${goQuote(file)}, idx-pluginname expected`);
  const idx = file.slice(0, dash);
  const err = pluginIndexError(idx);
  if (err !== undefined) throw new Error(err);
  return { idx, base: file.slice(dash + 1) };
}

/** Go's %q for a rune: single-quoted, with a quote inside escaped. */
function goQuoteRune(ch: string): string {
  return ch === "'" ? "'\\''" : `'${goQuote(ch).slice(1, -1).replace(/\\"/gu, '"')}'`;
}
