import { basename } from "node:path";

/** A plugin's identity: a two-digit index (its order among plugins) and a name. */
export interface PluginIdentity {
  readonly idx: string;
  readonly name: string;
}

/** `NN-name`, the form runtimes use to refer to a plugin. */
export function pluginId(p: PluginIdentity): string {
  return `${p.idx}-${p.name}`;
}

/** Throws unless `idx` is exactly two decimal digits, as the reference requires. */
export function checkPluginIndex(idx: string): void {
  if (!/^[0-9]{2}$/.test(idx)) throw new RangeError(`nri: invalid plugin index "${idx}": must be 2 digits`);
}

/** Throws unless `name` is non-empty and made of [a-zA-Z0-9_.+-], as the reference requires. */
export function checkPluginName(name: string): void {
  if (name === "") throw new RangeError("nri: invalid plugin name: name is empty");
  const bad = /[^a-zA-Z0-9_.+-]/u.exec(name);
  if (bad !== null) throw new RangeError(`nri: invalid plugin name "${name}": contains invalid character "${bad[0]}"`);
}

/** Splits `NN-name` into index and name, validating both. */
export function parsePluginId(id: string): PluginIdentity {
  const dash = id.indexOf("-");
  if (dash < 0) throw new RangeError(`nri: invalid plugin name "${id}": expected idx-name`);
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
