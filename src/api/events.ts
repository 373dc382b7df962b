import { Event } from "../../gen/v1beta1/api_lite.js";
import { oneOf } from "../internal/one-of.js";

/** The first and last events a plugin can subscribe to (UNKNOWN and LAST are bounds, not events). */
export const FIRST_EVENT = Event.RUN_POD_SANDBOX;
export const LAST_VALID_EVENT = Event.VALIDATE_CONTAINER_ADJUSTMENT;

/** Every bit a subscription mask may have: one per event from 1 to 14. */
export const VALID_EVENTS_MASK = (1 << LAST_VALID_EVENT) - 1;

/** Every subscribable event, in numeric order. */
export const ALL_EVENTS: readonly Event[] = Array.from(
  { length: LAST_VALID_EVENT },
  (_, i) => (i + 1) as Event,
);

/**
 * The teardown events, in numeric order: a plugin should never fail them. A runtime on the pod
 * sandbox lifecycle contract (`teardownErrors: "continue"` in nri-wire's) goes on past a plugin's
 * error in them; containerd/nri v0.12.5, and nri-wire's default, stop at the first.
 */
export const TEARDOWN_EVENTS: readonly Event[] = [Event.STOP_POD_SANDBOX, Event.REMOVE_POD_SANDBOX, Event.STOP_CONTAINER, Event.REMOVE_CONTAINER];

/** Method-style names (`RunPodSandbox`), indexed by event number. */
const methodNames: readonly string[] = ALL_EVENTS.map((e) => toMethodName(Event[e] ?? ""));

/** Lower-case names without separators, for case- and style-insensitive lookups. */
const byFoldedName = new Map<string, Event>(
  ALL_EVENTS.map((e) => [foldName(Event[e] ?? ""), e]),
);

function toMethodName(enumName: string): string {
  return enumName
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

function foldName(name: string): string {
  return name.replace(/[_\-\s]/g, "").toLowerCase();
}

function describe(event: number): string {
  const name = Event[event];
  return name === undefined ? `${event}` : `${name} (${event})`;
}

/** Whether `event` is one a plugin can subscribe to (1..14). */
export function isValidEvent(event: number): event is Event {
  return Number.isInteger(event) && event >= FIRST_EVENT && event <= LAST_VALID_EVENT;
}

/** The subscription bit of one event: `1 << (event - 1)`. */
export function eventBit(event: number): number {
  if (!isValidEvent(event)) {
    throw new RangeError(`nri: event ${describe(event)} is not a subscribable event`);
  }
  return 1 << (event - 1);
}

/** The mask subscribing to exactly the given events. */
export function eventsToMask(events: Iterable<number>): number {
  let mask = 0;
  for (const e of events) mask |= eventBit(e);
  return mask;
}

/**
 * The events of a subscription mask, in numeric order. Bits outside VALID_EVENTS_MASK are an
 * error, as they are for a runtime receiving them.
 */
export function maskToEvents(mask: number): Event[] {
  checkMask(mask);
  return ALL_EVENTS.filter((e) => (mask & (1 << (e - 1))) !== 0);
}

/** Throws unless `mask` is a 32-bit integer with no bits outside VALID_EVENTS_MASK. */
export function checkMask(mask: number): void {
  if (!Number.isInteger(mask) || mask < -0x80000000 || mask > 0xffffffff) {
    throw new RangeError(`nri: event mask ${mask} is not a 32-bit integer`);
  }
  const extra = (mask & ~VALID_EVENTS_MASK) >>> 0;
  if (extra !== 0) {
    throw new RangeError(
      `nri: event mask 0x${(mask >>> 0).toString(16)} has unknown bits 0x${extra.toString(16)}`,
    );
  }
}

/**
 * The event named `name`, in any case and either style: `RUN_POD_SANDBOX`, `RunPodSandbox`,
 * `runpodsandbox` and `run-pod-sandbox` are all RUN_POD_SANDBOX.
 */
export function parseEvent(name: string): Event {
  const folded = foldName(name);
  const event = byFoldedName.get(folded);
  if (event !== undefined) return event;
  if (folded === "unknown" || folded === "last") {
    throw new RangeError(`nri: event name "${name}" is a bound, not a subscribable event`);
  }
  throw new RangeError(`nri: unknown event name "${name}"`);
}

/** Name styles for formatEvent: the enum's `RUN_POD_SANDBOX` or the method's `RunPodSandbox`. */
export type EventNameStyle = "enum" | "method";

/** Refuses a style other than the two. */
function checkStyle(style: EventNameStyle): void {
  if (style !== "method" && style !== "enum") oneOf("nri: event name style", style, ["method", "enum"]);
}

/** The name of a subscribable event in the given style (default: method style). */
export function formatEvent(event: number, style: EventNameStyle = "method"): string {
  if (!isValidEvent(event)) {
    throw new RangeError(`nri: event ${describe(event)} is not a subscribable event`);
  }
  checkStyle(style);
  return style === "enum" ? (Event[event] as string) : (methodNames[event - 1] as string);
}

/**
 * A mask from a comma-separated list of event names in either style; `all` (alone or in the
 * list) subscribes to every event. Empty entries are ignored.
 */
export function parseEventMask(spec: string): number {
  let mask = 0;
  for (const part of spec.split(",")) {
    const name = part.trim();
    if (name === "") continue;
    mask |= name.toLowerCase() === "all" ? VALID_EVENTS_MASK : eventBit(parseEvent(name));
  }
  return mask;
}

/**
 * The name of the handler (and typed-client method) of each event: `runPodSandbox`. The lower-
 * camel form of formatEvent's method name, so the enum stays the one table of events.
 */
export type EventHandlerName = Uncapitalize<EventMethodName>;

/** `RUN_POD_SANDBOX` as `RunPodSandbox`, at the type level. */
type PascalCase<S extends string> = S extends `${infer H}_${infer T}` ? `${Capitalize<Lowercase<H>>}${PascalCase<T>}` : Capitalize<Lowercase<S>>;

/** The method-style names of the subscribable events (`RunPodSandbox`), derived from the enum. */
export type EventMethodName = PascalCase<Exclude<keyof typeof Event, "UNKNOWN" | "LAST">>;

/** The handler name of an event (`runPodSandbox`). */
export function eventHandlerName(event: number): EventHandlerName {
  const m = formatEvent(event);
  return (m.charAt(0).toLowerCase() + m.slice(1)) as EventHandlerName;
}

/** The event of a Plugin method in method style (`RunPodSandbox`), or undefined for Configure and the like. */
export function eventOfMethod(method: string): Event | undefined {
  const i = methodNames.indexOf(method);
  return i < 0 ? undefined : ((i + 1) as Event);
}

/** A comma-separated list of the events of a mask, in the given style. */
export function formatEventMask(mask: number, style: EventNameStyle = "method"): string {
  checkStyle(style);
  return maskToEvents(mask)
    .map((e) => formatEvent(e, style))
    .join(",");
}
