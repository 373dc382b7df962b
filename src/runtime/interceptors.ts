import type { PluginMethodName, PluginRequest, PluginResponse } from "../api/handlers.js";
import type { Interceptor } from "../internal/interceptor.js";
import type { KeyValue } from "../ttrpc/envelope.js";
import type { PluginInfo } from "./runtime-plugin.js";

/** One call of method `K` to a plugin, as the runtime's interceptors see it. */
export interface RuntimeCallOf<K extends PluginMethodName> {
  /** The plugin called: builtin, launched or external. */
  readonly plugin: PluginInfo;
  /** The handler name: `configure`, `createContainer`, ... */
  readonly method: K;
  /** The request, in v1beta1 form (translated on the way for a v1alpha1 plugin). */
  readonly request: PluginRequest<K>;
  /** The call's timeout: for a plugin on a socket, enforced and sent; a builtin gets it as its signal. */
  readonly timeoutMs: number;
  /** The event's cancellation, undefined when the caller gave none. */
  readonly signal: AbortSignal | undefined;
  /** ttrpc metadata sent with the call to a plugin on a socket (a builtin has none); interceptors may add entries. */
  readonly metadata: KeyValue[];
}

/** A call to a plugin, one of RuntimeCallOf's by method: narrowing `method` narrows `request`. */
export type RuntimeCall = { [K in PluginMethodName]: RuntimeCallOf<K> }[PluginMethodName];

/** A plugin's answer, the response message of the method called. */
export type RuntimeAnswer = { [K in PluginMethodName]: PluginResponse<K> }[PluginMethodName];

/**
 * Wraps every call the runtime makes to every plugin (builtin, launched or external), Configure,
 * Synchronize and Shutdown included. What the chain resolves with is the plugin's answer; what
 * it rejects with is the failure the failure policy sees: a rejection of the call itself
 * (`context deadline exceeded`, a lost connection) keeps its kind, any other error counts as an
 * error the plugin answered with.
 */
export type RuntimeInterceptor = Interceptor<RuntimeCall, RuntimeAnswer>;
