import type { PluginMethodName, PluginRequest, PluginResponse } from "../api/handlers.js";
import type { SharedRequest } from "./shared-payload.js";

/** How a plugin came to the runtime, as the reference names it in its logs. */
export type PluginKind = "external" | "pre-connected" | "builtin";

/** Options of one call to a plugin. */
export interface BackendCallOptions {
  /**
   * The call's time: the backend enforces it (a `deadline` PluginCallError when it passes) and a
   * socket plugin is sent it as ttrpc timeout_nano.
   */
  readonly timeoutMs: number;
  /** The event's cancellation: aborting it ends the call with a `canceled` PluginCallError. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The request's bytes as the event encoded them once for all its plugins: a socket plugin is
   * sent these instead of an encoding of its own; in-process handlers take the request.
   */
  readonly shared?: SharedRequest | undefined;
}

/**
 * What the runtime calls a plugin through, whatever kind it is: a ttrpc connection (external
 * or launched) or in-process handlers. `call` rejects only with PluginCallError.
 */
export interface PluginBackend {
  readonly kind: PluginKind;
  call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>>;
  /** Ends the plugin's connection (nothing for in-process plugins). */
  close(): void;
  /** Settles when the plugin's connection has ended; never for in-process plugins. */
  readonly closed: Promise<void>;
}
