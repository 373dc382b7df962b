/**
 * A plugin relying on a deprecated part of the protocol, recorded once per plugin and event,
 * with the words containerd uses for it.
 */
export interface Deprecation {
  /** `NN-name` of the plugin. */
  readonly plugin: string;
  /** The event's method name, e.g. `RunPodSandbox`. */
  readonly event: string;
  /** What is deprecated: `StateChange`. */
  readonly deprecated: "StateChange";
  /** `NRI plugin uses a deprecated interface.` */
  readonly message: string;
  /** `does not implement a dedicated RunPodSandbox RPC call` */
  readonly detail: string;
}

/** The record for a plugin that got `event` through StateChange. */
export function stateChangeDeprecation(plugin: string, event: string): Deprecation {
  return {
    plugin,
    event,
    deprecated: "StateChange",
    message: "NRI plugin uses a deprecated interface.",
    detail: `does not implement a dedicated ${event} RPC call`,
  };
}
