/**
 * nri-wire/translate: v1alpha1 <-> v1beta1 on ttrpc calls, as pure functions on bytes. The two
 * revisions share every PodSandbox and Container byte, so StateChange and the dedicated event
 * requests are translated by rewriting top-level tags, never by decoding.
 */
export { type Call, toV1alpha1, toV1beta1 } from "./call.js";
export { type EventCalls, type Revision, packages } from "../api/revision.js";
export { TranslateError } from "./errors.js";
export { type TranslatedResponse, responseToV1alpha1, responseToV1beta1 } from "./response.js";
export {
  type MethodRef,
  responseTypeName,
  serviceNames,
  serviceRevision,
} from "./service-names.js";
export {
  describeEvent,
  eventMethods,
  isStateChangeEvent,
  methodEvents,
  podEvents,
  stateChangeEventOf,
  stateChangeEvents,
  stateChangePluginMethods,
} from "./state-change-events.js";
export { type DedicatedRequest, fromStateChange, toStateChange } from "./state-change.js";
