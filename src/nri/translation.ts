import { Plugin } from "../../gen/v1beta1/api_pb.js";
import { ALL_EVENTS, formatEvent } from "../events.js";
import { responseToV1alpha1, responseToV1beta1, stateChangeEventOf, toV1alpha1, toV1beta1 } from "../translate/index.js";
import { V1ALPHA1, V1BETA1 } from "./versions.js";

/** Plugin methods of a StateChange-era (NRI <= v0.11) plugin. */
export const STATE_CHANGE_ERA_METHODS: readonly string[] = [
  "Configure",
  "Synchronize",
  "Shutdown",
  "CreateContainer",
  "UpdateContainer",
  "StopContainer",
  "UpdatePodSandbox",
  "StateChange",
  "ValidateContainerAdjustment",
];

const ALPHA_PLUGIN = `${V1ALPHA1}.Plugin`;
const BETA_PLUGIN = `${V1BETA1}.Plugin`;

const eventByMethod: ReadonlyMap<string, number> = new Map(ALL_EVENTS.map((e) => [formatEvent(e), e]));

/** The event a Plugin method delivers (any of the 14), or undefined for Configure and the like. */
export function eventOfMethod(method: string): number | undefined {
  return eventByMethod.get(method);
}

/** Whether a v1beta1 Plugin method is one of the nine that StateChange-era plugins get as StateChange. */
export function isStateChangeMethod(method: string): boolean {
  return stateChangeEventOf(method) !== undefined;
}

/** A v1alpha1 Plugin call (either dialect) as the v1beta1 call a handler serves. */
export function alphaRequestToBeta(method: string, payload: Uint8Array): { method: string; payload: Uint8Array } {
  const call = toV1beta1({ service: ALPHA_PLUGIN, method, payload });
  return { method: call.method, payload: call.payload };
}

/** A v1beta1 Plugin call as the v1alpha1 call to send: StateChange form when `stateChange`. */
export function betaRequestToAlpha(method: string, payload: Uint8Array, stateChange: boolean): { method: string; payload: Uint8Array } {
  const call = toV1alpha1({ service: BETA_PLUGIN, method, payload }, stateChange ? "state-change" : "dedicated");
  return { method: call.method, payload: call.payload };
}

/** A v1beta1 handler's response as the answer to the v1alpha1 call `alphaMethod`. */
export function betaResponseToAlpha(alphaMethod: string, payload: Uint8Array): Uint8Array {
  return responseToV1alpha1({ service: ALPHA_PLUGIN, method: alphaMethod }, payload).payload;
}

/** A v1alpha1 plugin's answer as the response of the v1beta1 call `betaMethod`. */
export function alphaResponseToBeta(betaMethod: string, payload: Uint8Array): Uint8Array {
  return responseToV1beta1({ service: BETA_PLUGIN, method: betaMethod }, payload).payload;
}

/** Every v1beta1 Plugin method name. */
export const PLUGIN_METHODS: readonly string[] = Plugin.methods.map((m) => m.name);
