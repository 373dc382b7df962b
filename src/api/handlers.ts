import type { MessageShape } from "@bufbuild/protobuf";
import type { Plugin } from "../../gen/v1beta1/api_pb.js";
import { services_v1beta1_api } from "../../gen/v1beta1/api_lite.js";
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

/** The handler names a plugin may define, in the Plugin service's order. */
export const HANDLER_NAMES: readonly string[] = services_v1beta1_api.Plugin.methods.map((m) => m.localName);

/** Edit distance between two names (insertions, deletions, substitutions, adjacent swaps). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The handler name nearest to `key` (case aside), when it is near enough to be a typo of it. */
function nearestHandler(key: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of HANDLER_NAMES) {
    const d = distance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined;
}

/**
 * Refuses handlers a plugin would silently never call: a key that names no Plugin method (with
 * the nearest name, `nri: unknown handler "createContainr": did you mean "createContainer"?`)
 * or a handler that is not a function. Undefined values are allowed (an optional handler left out).
 */
export function checkHandlers(handlers: object): void {
  for (const [key, value] of Object.entries(handlers)) {
    if (!HANDLER_NAMES.includes(key)) {
      const near = nearestHandler(key);
      throw new TypeError(`nri: unknown handler "${key}": ${near === undefined ? `the handlers are ${HANDLER_NAMES.join(", ")}` : `did you mean "${near}"?`}`);
    }
    if (value !== undefined && typeof value !== "function") throw new TypeError(`nri: handler "${key}" is ${value === null ? "null" : `a ${typeof value}`}, not a function`);
  }
}
