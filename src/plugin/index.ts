/**
 * nri-wire/plugin: what a plugin author uses. Handlers are written against v1beta1 types and
 * work with runtimes of either protocol revision. The v1beta1 message types and enums, their
 * generated code (`messages_v1beta1_api`, `encodeX`/`decodeX`), `create` and `clone` are
 * re-exported so a plugin needs this one import. Importing it decodes no descriptor: messages are
 * made and coded by generated code. The schemas are those of nri-wire/v1beta1.
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
export { markForRemoval, markedForRemoval } from "./helpers/removal.js";
export type { CallContext } from "../ttrpc/server.js";
export { clone, create } from "./messages.js";
export * from "../../gen/v1beta1/api_lite.js";
export * from "../../gen/v1beta1/api_codec.js";
