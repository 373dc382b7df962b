/**
 * nri-wire/plugin: what a plugin author uses. Handlers are written against v1beta1 types and
 * work with runtimes of either protocol revision. The v1beta1 message types and enums, `create`
 * and `clone` are here too, so a plugin needs this one import. Importing it decodes no
 * descriptor: messages are made and coded by generated code. The schemas are nri-wire/v1beta1's.
 */
export { NriPlugin } from "./plugin.js";
export type { PluginOptions, RuntimeInfo } from "./options.js";
export type { PluginAnswer, PluginCall, PluginCallOf, PluginInterceptor } from "./interceptors.js";
export type { Interceptor } from "../internal/interceptor.js";
export { type HandlerContext, type PluginHandlers, type PluginMethodName, type PluginMethods, type PluginRequest, type PluginResponse, eventsOf } from "../api/handlers.js";
export type { LogFields, Logger } from "../api/logger.js";
export { type JsonLoggerOptions, type LogLevel, jsonLogger } from "../api/json-logger.js";
export type { PrometheusOptions, PromRegistry } from "../api/prometheus.js";
export type { TracerProviderLike, TracingOptions } from "../api/tracing.js";
export type { Dialect, Revision } from "../api/revision.js";
export type { PluginIdentity } from "../api/identity.js";
export { DEFAULT_SOCKET_PATH } from "../api/socket.js";
export { NRI_VERSION } from "../api/releases.js";
export { AdjustmentBuilder } from "../api/adjustment-builder.js";
export { UpdateBuilder, eviction } from "../api/update-builder.js";
export { ResourceSetters } from "../api/resource-setters.js";
export type { Int64Like } from "../api/integers.js";
export { type Loose, type LooseFields, type LooseMessage, type Wrapper, toMessage } from "../api/loose.js";
export { markForRemoval, markedForRemoval } from "../api/removal.js";
export * from "../api/owners.js";
export { NriCallError } from "../api/errors.js";
export { RpcError } from "../ttrpc/errors.js";
export { Code } from "../ttrpc/status.js";
export { DecodeError } from "../wire/errors.js";
export { clone, create } from "../api/messages.js";
export * from "../../gen/v1beta1/api_lite.js";
