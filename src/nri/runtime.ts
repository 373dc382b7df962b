/**
 * nri-wire/runtime: what a runtime library uses. Accepts plugins of any revision and gives the
 * runtime one v1beta1 client per plugin, recording deprecations where old plugins need them.
 */
export { type EventMethod, type EventResult, NriRuntime, PluginHandle, type RuntimeOptions } from "./runtime-endpoint.js";
export { type Deprecation, stateChangeDeprecation } from "./deprecation.js";
export { type PluginIdentity, pluginId } from "./identity.js";
export type { ApiVersion } from "./versions.js";
