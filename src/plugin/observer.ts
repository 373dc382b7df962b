import type { RuntimeInfo } from "./options.js";
import type { PluginInterceptor } from "./interceptors.js";

/**
 * What watches a plugin for operators (its metrics, its traces): an interceptor around every
 * call, and the connection's lifecycle.
 */
export interface PluginObserver {
  /** Runs outside the user's interceptors. */
  readonly interceptor?: PluginInterceptor;
  /** A connection is being made (`id` is the plugin's `NN-name`). */
  connecting?(id: string): void;
  /** The plugin is registered, configured and synchronized. */
  registered?(id: string, runtime: RuntimeInfo): void;
  /** The connection ended. */
  closed?(id: string): void;
}
