/**
 * nri-wire/plugin: what a plugin author uses. Handlers are written against v1beta1 types and
 * work with runtimes of either protocol revision. The v1beta1 messages, their schemas, `create`
 * and `clone` are re-exported so a plugin needs this one import. Importing it decodes no
 * descriptor: messages are made and coded by generated code, and the schemas load on first use.
 */
export type { Dialect, Revision } from "../api/revision.js";
export {
  type PluginHandlers,
  type MaybePromise,
  type PluginLog,
  type PluginMethods,
  type PluginOptions,
  type RuntimeInfo,
  NriPlugin,
  eventsOf,
} from "./plugin.js";
export { type IdentitySources, type PluginIdentity, checkPluginIndex, checkPluginName, parsePluginId, pluginId, resolveIdentity } from "../api/identity.js";
export { DEFAULT_SOCKET_PATH } from "../api/socket.js";
export { NRI_VERSION, eventsKnownBy, inferNriVersion } from "../api/releases.js";
export { AdjustmentBuilder } from "./helpers/adjustment.js";
export { UpdateBuilder, eviction } from "./helpers/update.js";
export { ResourceSetters } from "./helpers/resources.js";
export { type Int64Like, type IntegerKind, checkInteger, int32, int64, uint64 } from "./helpers/integers.js";
export { type Loose, type LooseFields, type LooseMessage, type Wrapper, toMessage } from "./helpers/loose.js";
export { markForRemoval, markedForRemoval } from "../api/removal.js";
export type { CallContext } from "../ttrpc/server.js";
export { clone } from "../wire/clone.js";
export { create } from "../wire/create.js";
export * from "../../gen/v1beta1/api_lite.js";
export * from "../../gen/v1beta1/api_codec.js";
