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
import { HANDLER_NAMES, type PluginHandlers, checkHandlers } from "../api/handlers.js";

export { HANDLER_NAMES };

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
  try {
    checkHandlers(handlers);
  } catch (e) {
    throw new Error(`default export: ${(e as Error).message.replace(/^nri: /u, "")}`, { cause: e });
  }
  if (Object.values(handlers).every((h) => h === undefined)) throw new Error("default export has no plugin handler (such as createContainer)");
  return handlers as PluginHandlers;
}
