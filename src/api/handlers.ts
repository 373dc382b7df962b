import type { MessageShape } from "@bufbuild/protobuf";
import type { Plugin } from "../../gen/v1beta1/api_pb.js";
import { ALL_EVENTS, eventBit, eventHandlerName } from "./events.js";
import type { Loose } from "./loose.js";

/** The v1beta1 Plugin methods, by handler name. */
export type PluginMethods = (typeof Plugin)["method"];
/** A Plugin method's handler name: `configure`, `createContainer`, ... */
export type PluginMethodName = keyof PluginMethods;
/** The request message of a Plugin method. */
export type PluginRequest<K extends PluginMethodName> = MessageShape<PluginMethods[K]["input"]>;
/** The response message of a Plugin method. */
export type PluginResponse<K extends PluginMethodName> = MessageShape<PluginMethods[K]["output"]>;

/** A value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * What a handler gets besides its request, wherever the plugin runs: in its own process over
 * the socket, or in the runtime's process as a builtin plugin.
 */
export interface HandlerContext {
  /** Aborted when the call's deadline passes, the event is canceled or the connection closes. */
  readonly signal: AbortSignal;
  /** performance.now() value at which the call's deadline passes, or undefined for none. */
  readonly deadline: number | undefined;
}

/**
 * Handlers of a plugin, written against v1beta1 types whatever the runtime speaks. Each takes
 * the request and returns the response, as a message or a plain object of its fields (see
 * Loose), or nothing for an empty one. The plugin subscribes to the events it has handlers
 * for (fewer when its configure handler asks for fewer, or its runtime's release does not know
 * some). A thrown error is the plugin's error: its message reaches the runtime (a
 * validateContainerAdjustment handler rejects the adjustment by throwing). The same object runs
 * as its own process (`NriPlugin`) or inside a runtime (`builtinPlugins` of `NriRuntime`).
 */
export type PluginHandlers = {
  [K in keyof PluginMethods]?: (
    request: MessageShape<PluginMethods[K]["input"]>,
    ctx: HandlerContext,
  ) => MaybePromise<Loose<MessageShape<PluginMethods[K]["output"]>> | undefined | void>;
};

/** The subscription mask of a set of handlers: one bit per event handled. */
export function eventsOf(handlers: PluginHandlers): number {
  let mask = 0;
  for (const event of ALL_EVENTS) if (typeof handlers[eventHandlerName(event)] === "function") mask |= eventBit(event);
  return mask;
}
