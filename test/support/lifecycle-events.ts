/**
 * The lifecycle events as tests expect peers to send them, by Plugin method name. Written here
 * once from the spec and test/interop/PEERS.md, not taken from src, so that src can be wrong.
 */

/**
 * The script of the interop runtimes (PEERS.md `runtime`): one pod and one container, in this
 * order. A plugin that validates also gets ValidateContainerAdjustment right after
 * CreateContainer (`withValidation`).
 */
export const SCRIPT_EVENTS: readonly string[] = [
  "RunPodSandbox", "CreateContainer", "PostCreateContainer", "StartContainer", "PostStartContainer",
  "UpdateContainer", "PostUpdateContainer", "StopContainer", "RemoveContainer",
  "UpdatePodSandbox", "PostUpdatePodSandbox", "StopPodSandbox", "RemovePodSandbox",
];

/**
 * The nine events that have no reply of their own: a StateChange-era plugin (NRI before v0.12)
 * receives them as StateChange; every other event has had a dedicated call all along.
 */
export const STATE_CHANGE_EVENTS: ReadonlySet<string> = new Set([
  "RunPodSandbox", "StopPodSandbox", "RemovePodSandbox", "PostCreateContainer", "StartContainer",
  "PostStartContainer", "PostUpdateContainer", "RemoveContainer", "PostUpdatePodSandbox",
]);

/** `events` with ValidateContainerAdjustment after CreateContainer, where a runtime sends it. */
export function withValidation(events: readonly string[]): string[] {
  return events.flatMap((e) => (e === "CreateContainer" ? [e, "ValidateContainerAdjustment"] : [e]));
}

/** The events of `events` that a StateChange-era plugin receives as StateChange, in order. */
export function viaStateChange(events: readonly string[]): string[] {
  return events.filter((e) => STATE_CHANGE_EVENTS.has(e));
}

/** A method name as the Event enum spells it: `RunPodSandbox` is `RUN_POD_SANDBOX`. */
export function enumName(method: string): string {
  return method.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase();
}

/**
 * The events a v0.6.1 plugin subscribed to (mask 2047: events 1 to 11) gets in the recorded Go
 * sessions (test/fixtures/vectors): the script without the pod updates.
 */
export const RECORDED_LEGACY_EVENTS: readonly string[] = SCRIPT_EVENTS.filter((e) => e !== "UpdatePodSandbox" && e !== "PostUpdatePodSandbox");
