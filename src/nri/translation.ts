/**
 * @internal Names the runtime endpoint still imports; the plugin side uses src/translate and
 * src/events directly. Everything here is derived from those tables.
 */
import { eventOfMethod } from "../events.js";
import { packages, responseToV1alpha1, responseToV1beta1, stateChangeEraMethods, stateChangeEventOf, toV1alpha1, toV1beta1 } from "../translate/index.js";

export { eventOfMethod };

/** @internal Plugin methods of a StateChange-era plugin. */
export const STATE_CHANGE_ERA_METHODS: readonly string[] = stateChangeEraMethods;

const ALPHA_PLUGIN = `${packages.v1alpha1}.Plugin`;
const BETA_PLUGIN = `${packages.v1beta1}.Plugin`;

/** @internal Whether a Plugin method is one of the nine StateChange events. */
export function isStateChangeMethod(method: string): boolean {
  return stateChangeEventOf(method) !== undefined;
}

/** @internal A v1alpha1 Plugin call as the v1beta1 call a handler serves. */
export function alphaRequestToBeta(method: string, payload: Uint8Array): { method: string; payload: Uint8Array } {
  return toV1beta1({ service: ALPHA_PLUGIN, method, payload });
}

/** @internal A v1beta1 Plugin call as the v1alpha1 call to send: StateChange form when `stateChange`. */
export function betaRequestToAlpha(method: string, payload: Uint8Array, stateChange: boolean): { method: string; payload: Uint8Array } {
  return toV1alpha1({ service: BETA_PLUGIN, method, payload }, stateChange ? "state-change" : "dedicated");
}

/** @internal A v1beta1 handler's response as the answer to the v1alpha1 call `alphaMethod`. */
export function betaResponseToAlpha(alphaMethod: string, payload: Uint8Array): Uint8Array {
  return responseToV1alpha1({ service: ALPHA_PLUGIN, method: alphaMethod }, payload).payload;
}

/** @internal A v1alpha1 plugin's answer as the response of the v1beta1 call `betaMethod`. */
export function alphaResponseToBeta(betaMethod: string, payload: Uint8Array): Uint8Array {
  return responseToV1beta1({ service: BETA_PLUGIN, method: betaMethod }, payload).payload;
}
