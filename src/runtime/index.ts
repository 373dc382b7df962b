/**
 * nri-wire/runtime: what a container runtime uses. NriRuntime has the semantics of
 * containerd/nri v0.12.5's pkg/adaptation: plugins of either revision, launched or external or
 * in-process, events in index order with merged answers, failure policies and Go's error texts.
 * Every v1beta1 message type and enum is here too, as Go's adaptation package aliases them,
 * so a runtime needs this one import.
 */

export { type EventOptions, type EventRequest, NriRuntime } from "./nri-runtime.js";
export {
  DEFAULT_PLUGIN_CONFIG_PATH,
  DEFAULT_PLUGIN_PATH,
  DEFAULT_REGISTRATION_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type RuntimeOptions,
  type SyncCallback,
  type SyncFn,
  type UpdateFn,
  type UpdateSource,
} from "./options.js";
export type { EventMethod, PluginInfo } from "./runtime-plugin.js";
export type { RuntimeAnswer, RuntimeCall, RuntimeCallOf, RuntimeInterceptor } from "./interceptors.js";
export type { RuntimeMetrics } from "./metrics.js";
export type { Interceptor } from "../internal/interceptor.js";
export type { BuiltinPlugin, PluginKind } from "./backends.js";
export { type HandlerContext, type PluginHandlers, type PluginMethodName, type PluginMethods, type PluginRequest, type PluginResponse, eventsOf } from "../api/handlers.js";
export type { LogFields, Logger } from "../api/logger.js";
export { type JsonLoggerOptions, type LogLevel, jsonLogger } from "../api/json-logger.js";
export type { PrometheusOptions, PromRegistry } from "../api/prometheus.js";
export type { TracerProviderLike, TracingOptions } from "../api/tracing.js";
export { type Loose, type LooseFields, type LooseMessage, type Wrapper, toMessage } from "../api/loose.js";
export { type Deprecation, stateChangeDeprecation } from "./deprecation.js";
export { type DefaultValidatorConfig } from "./default-validator.js";
export { AdaptationError, EventError } from "./errors.js";
export { NriCallError } from "../api/errors.js";
export { RpcError } from "../ttrpc/errors.js";
export { Code } from "../ttrpc/status.js";
export { DecodeError } from "../wire/errors.js";
export { DEFAULT_SOCKET_PATH } from "../api/socket.js";
export type { Dialect, EventCalls, Revision } from "../api/revision.js";
export { clone, create } from "../api/messages.js";
export { AdjustmentBuilder } from "../api/adjustment-builder.js";
export { UpdateBuilder, eviction } from "../api/update-builder.js";
export { ResourceSetters } from "../api/resource-setters.js";
export type { Int64Like } from "../api/integers.js";
export { markForRemoval, markedForRemoval } from "../api/removal.js";
export * from "../api/owners.js";
export * from "../../gen/v1beta1/api_lite.js";
