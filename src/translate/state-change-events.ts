import { services_v1alpha1_api } from "../../gen/v1alpha1/api_lite.js";
import { Event } from "../../gen/v1beta1/api_lite.js";
import { formatEvent } from "../api/events.js";

/**
 * The nine events that a StateChange-era peer receives as `Plugin.StateChange` and a dedicated-era
 * peer as their own call. Each call's method name comes from the one event table (src/api/events.ts), so
 * an event cannot be paired with another event's method: the bug of an earlier upstream attempt
 * (PostUpdatePodSandbox sent as STOP_POD_SANDBOX, PostUpdateContainer as POST_START_CONTAINER).
 */
const table: readonly (readonly [Event, string])[] = [
  Event.RUN_POD_SANDBOX,
  Event.STOP_POD_SANDBOX,
  Event.REMOVE_POD_SANDBOX,
  Event.POST_CREATE_CONTAINER,
  Event.START_CONTAINER,
  Event.POST_START_CONTAINER,
  Event.POST_UPDATE_CONTAINER,
  Event.REMOVE_CONTAINER,
  Event.POST_UPDATE_POD_SANDBOX,
].map((e) => [e, formatEvent(e)] as const);

/** The nine StateChange events, in numeric order. */
export const stateChangeEvents: ReadonlySet<Event> = new Set(table.map(([e]) => e));

/** The StateChange events about a pod alone: their requests carry `pod` and no `container`. */
export const podEvents: ReadonlySet<Event> = new Set([
  Event.RUN_POD_SANDBOX,
  Event.STOP_POD_SANDBOX,
  Event.REMOVE_POD_SANDBOX,
  Event.POST_UPDATE_POD_SANDBOX,
]);

/** Each StateChange event's dedicated Plugin method (`RunPodSandbox`), in both packages. */
export const eventMethods: ReadonlyMap<Event, string> = new Map(table);

/** The StateChange event of each dedicated Plugin method: the inverse of eventMethods. */
export const methodEvents: ReadonlyMap<string, Event> = new Map(table.map(([e, m]) => [m, e]));

/** The StateChange event a Plugin method stands for, or undefined if it is not one of the nine. */
export function stateChangeEventOf(method: string): Event | undefined {
  return methodEvents.get(method);
}

/** Whether `event` is one of the nine StateChange events. */
export function isStateChangeEvent(event: number): event is Event {
  return stateChangeEvents.has(event);
}

/** An event number for messages: `4 (CREATE_CONTAINER)`, or the bare number if it has no name. */
export function describeEvent(event: number): string {
  const name = Number.isInteger(event) ? (Event as unknown as Record<number, string | undefined>)[event] : undefined;
  return name === undefined ? `${event}` : `${event} (${name})`;
}

/**
 * The Plugin methods a plugin that takes the nine events as StateChange (NRI <= v0.11) serves:
 * every v1alpha1 Plugin method but the nine dedicated ones.
 */
export const stateChangePluginMethods: readonly string[] = services_v1alpha1_api.Plugin.methods.map((m) => m.name).filter((m) => !methodEvents.has(m));
