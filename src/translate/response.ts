import { type MethodRef, responseTypeName, shortServiceName } from "./service-names.js";

/** A response payload and the full name of its type, undefined for a method the revision lacks. */
export interface TranslatedResponse {
  readonly typeName: string | undefined;
  readonly payload: Uint8Array;
}

/*
 * No response ever changes bytes: the empty responses (RunPodSandboxResponse, ShutdownResponse,
 * RegisterPluginResponse, LogResponse, ...) and v1alpha1 Empty are all empty messages, and every
 * other response is a shared message. Only the type changes, and for an Empty answer it depends on
 * the call answered. Unknown fields travel as they are (nothing can collide with them).
 */

/**
 * A v1alpha1 peer's answer to `call`, the v1beta1 call it was translated from, as that call's
 * v1beta1 response: same payload object, the v1beta1 response type (`RunPodSandboxResponse` even
 * when the peer answered a StateChange with Empty).
 */
export function responseToV1beta1(call: MethodRef, payload: Uint8Array): TranslatedResponse {
  shortServiceName(call.service, "v1beta1");
  return { typeName: responseTypeName("v1beta1", call), payload };
}

/**
 * A v1beta1 handler's answer to `call`, the v1alpha1 call as it arrived, as that call's v1alpha1
 * response: same payload object, the v1alpha1 response type (Empty for StateChange, Shutdown,
 * RegisterPlugin and Log).
 */
export function responseToV1alpha1(call: MethodRef, payload: Uint8Array): TranslatedResponse {
  shortServiceName(call.service, "v1alpha1");
  return { typeName: responseTypeName("v1alpha1", call), payload };
}
