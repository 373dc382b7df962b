/**
 * How an entry file exposes its plugin to `nri-wire build`: its default export is an object of
 * plugin handlers (PluginHandlers, the same object `new NriPlugin(handlers)` takes). The built
 * executable owns the connection (socket or inherited fd, reconnects, readiness, the config
 * file), so an entry only says what the plugin does:
 *
 * ```ts
 * import type { PluginHandlers } from "nri-wire/plugin";
 * export default { createContainer: () => ({ adjust: { env: [{ key: "SEEN", value: "1" }] } }) } satisfies PluginHandlers;
 * ```
 */
import { services_v1beta1_api } from "../../gen/v1beta1/api_lite.js";
import type { PluginHandlers } from "../nri/plugin-endpoint.js";

/** The handler names a plugin may define, in the Plugin service's order. */
export const HANDLER_NAMES: readonly string[] = services_v1beta1_api.Plugin.methods.map((m) => m.localName);

/**
 * The plugin handlers of an entry module's namespace; throws naming what is wrong: no default
 * export, one that is not an object, a key that is no Plugin method or not a function, no handler.
 */
export function pluginHandlersOf(module: Readonly<Record<string, unknown>>): PluginHandlers {
  if (!("default" in module) || module.default === undefined) {
    throw new Error("exports no plugin: its default export must be an object of plugin handlers (such as createContainer)");
  }
  const handlers = module.default;
  if (handlers === null || typeof handlers !== "object" || Array.isArray(handlers)) {
    const what = handlers === null ? "null" : Array.isArray(handlers) ? "an array" : `a ${typeof handlers}`;
    throw new Error(`default export is ${what}, not an object of plugin handlers (such as createContainer)`);
  }
  const keys = Object.keys(handlers);
  for (const key of keys) {
    if (!HANDLER_NAMES.includes(key)) throw new Error(`default export: "${key}" is not a plugin method (${HANDLER_NAMES.join(", ")})`);
    const value = (handlers as Record<string, unknown>)[key];
    if (typeof value !== "function") throw new Error(`default export: "${key}" is a ${value === null ? "null" : typeof value}, not a function`);
  }
  if (keys.length === 0) throw new Error("default export has no plugin handler (such as createContainer)");
  return handlers as PluginHandlers;
}
