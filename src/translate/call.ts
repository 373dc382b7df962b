import { EVENT_CALLS, type EventCalls } from "../api/revision.js";
import { oneOf } from "../internal/one-of.js";
import { stateChangeEventOf } from "./state-change-events.js";
import { fromStateChange, toStateChange } from "./state-change.js";
import { packages } from "../api/revision.js";
import { type MethodRef, shortServiceName } from "./service-names.js";

/** A ttrpc call: full service name, method and request bytes. */
export interface Call extends MethodRef {
  readonly payload: Uint8Array;
}


const EMPTY = new Uint8Array(0);

/**
 * A v1beta1 call as the v1alpha1 call for a peer receiving events as `eventCalls` (any other
 * value is a RangeError):
 * - `Plugin.Shutdown{reason}` becomes `Plugin.Shutdown(Empty)`: the reason cannot travel.
 * - for a `statechange` peer, the nine event calls become `Plugin.StateChange` (see toStateChange
 *   for the tag rewriting and its rules for non-canonical input).
 * - every other method, known or not, keeps its name and the very same payload object.
 * A service outside `nri.pkg.api.v1beta1.{Runtime,Plugin,HostFunctions}` is a TranslateError.
 */
export function toV1alpha1(call: Call, eventCalls: EventCalls): Call {
  if (eventCalls !== "dedicated" && eventCalls !== "statechange") oneOf("translate: event calls", eventCalls, EVENT_CALLS);
  const short = shortServiceName(call.service, "v1beta1");
  const service = `${packages.v1alpha1}.${short}`;
  if (short === "Plugin") {
    if (call.method === "Shutdown") return { service, method: "Shutdown", payload: EMPTY };
    if (eventCalls === "statechange") {
      const event = stateChangeEventOf(call.method);
      if (event !== undefined) return { service, method: "StateChange", payload: toStateChange(event, call.payload) };
    }
  }
  return { service, method: call.method, payload: call.payload };
}

/**
 * A v1alpha1 call (dedicated or StateChange) as the v1beta1 call:
 * - `Plugin.StateChange` becomes the dedicated call of its event (see fromStateChange; an event
 *   outside the nine is a TranslateError).
 * - `Plugin.Shutdown(Empty)` becomes `Plugin.Shutdown(ShutdownRequest{})`: an empty reason.
 * - every other method, known or not, keeps its name and the very same payload object.
 * A service outside `nri.pkg.api.v1alpha1.{Runtime,Plugin,HostFunctions}` is a TranslateError.
 */
export function toV1beta1(call: Call): Call {
  const short = shortServiceName(call.service, "v1alpha1");
  const service = `${packages.v1beta1}.${short}`;
  if (short === "Plugin") {
    if (call.method === "StateChange") {
      const { method, payload } = fromStateChange(call.payload);
      return { service, method, payload };
    }
    if (call.method === "Shutdown") return { service, method: "Shutdown", payload: EMPTY };
  }
  return { service, method: call.method, payload: call.payload };
}
