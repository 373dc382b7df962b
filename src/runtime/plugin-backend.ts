import type { MessageShape } from "@bufbuild/protobuf";
import type { Plugin } from "../../gen/v1beta1/api_pb.js";
import type { SharedRequest } from "./shared-payload.js";

/** The v1beta1 Plugin service's methods, by local name. */
export type PluginMethods = (typeof Plugin)["method"];
/** A Plugin method's local name: `configure`, `createContainer`, ... */
export type PluginMethodName = keyof PluginMethods;
/** The request message of a Plugin method. */
export type PluginRequest<K extends PluginMethodName> = MessageShape<PluginMethods[K]["input"]>;
/** The response message of a Plugin method. */
export type PluginResponse<K extends PluginMethodName> = MessageShape<PluginMethods[K]["output"]>;

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
