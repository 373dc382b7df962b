/**
 * The protocol revisions: `v1alpha1` is upstream NRI on the wire; `v1beta1` is the revision
 * proposed in containerd/nri PR #235 (dedicated calls, no shared Empty, a Shutdown reason).
 */
export type Revision = "v1alpha1" | "v1beta1";

/** The protobuf package of each revision. */
export const packages: Readonly<Record<Revision, string>> = {
  v1alpha1: "nri.pkg.api.v1alpha1",
  v1beta1: "nri.pkg.api.v1beta1",
};

/**
 * How a v1alpha1 peer receives the nine StateChange events: `dedicated`, a call per event (NRI
 * v0.12 and later), or `statechange`, all through `Plugin.StateChange` (NRI v0.11 and earlier).
 */
export type EventCalls = "dedicated" | "statechange";

/** Every way of receiving events. */
export const EVENT_CALLS: readonly EventCalls[] = ["dedicated", "statechange"];

/**
 * What a peer speaks: a revision and, for v1alpha1, how events travel.
 * - `v1beta1`: a peer of both revisions. A plugin serves both package names and registers with
 *   v1beta1 first, falling back to v1alpha1; a runtime answers each plugin in the revision it
 *   registered with.
 * - `v1alpha1`: a peer of NRI v0.12 and later: v1alpha1 only, a call per event (a runtime falls
 *   back to StateChange for a plugin that answers UNIMPLEMENTED).
 * - `statechange`: a peer of NRI v0.11 and earlier: v1alpha1 only, the nine StateChange events
 *   always through `Plugin.StateChange`.
 */
export type Dialect = "v1beta1" | "v1alpha1" | "statechange";

/** Every dialect, newest first. */
export const DIALECTS: readonly Dialect[] = ["v1beta1", "v1alpha1", "statechange"];

/** The revision a peer of `dialect` speaks. */
export function revisionOf(dialect: Dialect): Revision {
  return dialect === "v1beta1" ? "v1beta1" : "v1alpha1";
}

/** How a peer of `dialect` receives events. */
export function eventCallsOf(dialect: Dialect): EventCalls {
  return dialect === "statechange" ? "statechange" : "dedicated";
}
