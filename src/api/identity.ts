import { basename } from "node:path";
import { goQuote } from "../internal/go-quote.js";

/** A plugin's identity: a two-digit index (its order among plugins) and a name. */
export interface PluginIdentity {
  readonly idx: string;
  readonly name: string;
}

/** `NN-name`, the form runtimes use to refer to a plugin. */
export function pluginId(p: PluginIdentity): string {
  return `${p.idx}-${p.name}`;
}

/** Throws unless `idx` is exactly two decimal digits (the reference's rule and text). */
export function checkPluginIndex(idx: string): void {
  const err = pluginIndexError(idx);
  if (err !== undefined) throw new RangeError(`nri: ${err}`);
}

/** Throws unless `name` is non-empty and made of [a-zA-Z0-9_.+-] (the reference's rule and text). */
export function checkPluginName(name: string): void {
  const err = pluginNameError(name);
  if (err !== undefined) throw new RangeError(`nri: ${err}`);
}

/** Splits `NN-name` into index and name, validating both. */
export function parsePluginId(id: string): PluginIdentity {
  const dash = id.indexOf("-");
  if (dash < 0) throw new RangeError(`nri: invalid plugin name ${goQuote(id)}, idx-pluginname expected`);
  const p = { idx: id.slice(0, dash), name: id.slice(dash + 1) };
  checkPluginIndex(p.idx);
  checkPluginName(p.name);
  return p;
}

/** Where a plugin's identity may come from, first match wins per field. */
export interface IdentitySources {
  name?: string | undefined;
  idx?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** The executable path; its base name may be `NN-name`. */
  executable?: string | undefined;
}

/**
 * A plugin's identity from explicit options, then NRI_PLUGIN_NAME / NRI_PLUGIN_IDX (set by a
 * runtime that launched the plugin), then an executable named `NN-name`.
 */
export function resolveIdentity(src: IdentitySources): PluginIdentity {
  const env = src.env ?? {};
  let name = src.name ?? env.NRI_PLUGIN_NAME;
  let idx = src.idx ?? env.NRI_PLUGIN_IDX;
  if ((name === undefined || idx === undefined) && src.executable !== undefined) {
    const base = basename(src.executable).replace(/\.(m?js|ts|mts)$/u, "");
    const m = /^([0-9]{2})-(.+)$/u.exec(base);
    if (m !== null) {
      idx ??= m[1];
      name ??= m[2];
    } else name ??= base;
  }
  if (idx === undefined) throw new RangeError("nri: no plugin index: give idx, set NRI_PLUGIN_IDX, or name the executable NN-name");
  if (name === undefined) throw new RangeError("nri: no plugin name: give name or set NRI_PLUGIN_NAME");
  checkPluginIndex(idx);
  checkPluginName(name);
  return { idx, name };
}


/*
 * The name and index rules with the reference's texts (pkg/api CheckPluginName,
 * CheckPluginIndex, ParsePluginName), so both sides' errors read as containerd's do.
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
