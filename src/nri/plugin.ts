/**
 * nri-wire/plugin: what a plugin author uses. Handlers are written against v1beta1 types and
 * work with runtimes of either protocol revision.
 */
export { type PluginDialect, type PluginHandlers, type PluginOptions, NriPlugin, eventsOf } from "./plugin-endpoint.js";
export { type PluginIdentity, checkPluginIndex, checkPluginName, parsePluginId, pluginId, resolveIdentity } from "./identity.js";
export { DEFAULT_SOCKET_PATH } from "./socket.js";
export type { CallContext } from "../ttrpc/server.js";
