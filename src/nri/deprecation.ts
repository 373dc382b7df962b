/** A plugin relying on a deprecated part of the protocol, recorded once per plugin and event. */
export interface Deprecation {
  /** `NN-name` of the plugin. */
  readonly plugin: string;
  /** The event's method name, e.g. `RunPodSandbox`. */
  readonly method: string;
  /** `plugin 10-template does not implement RunPodSandbox: uses deprecated StateChange`. */
  readonly message: string;
}

/** The deprecation recorded when a plugin gets `method` as StateChange because it lacks the dedicated call. */
export function stateChangeDeprecation(plugin: string, method: string): Deprecation {
  return { plugin, method, message: `plugin ${plugin} does not implement ${method}: uses deprecated StateChange` };
}
