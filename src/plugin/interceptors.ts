import type { Event } from "../../gen/v1beta1/api_lite.js";
import type { HandlerContext, PluginMethodName, PluginRequest, PluginResponse } from "../api/handlers.js";
import type { PluginIdentity } from "../api/identity.js";
import type { Loose } from "../api/loose.js";
import type { Revision } from "../api/revision.js";
import type { Interceptor } from "../internal/interceptor.js";
import type { KeyValue } from "../ttrpc/envelope.js";

/** One call of method `K` as the plugin's interceptors see it. */
export interface PluginCallOf<K extends PluginMethodName> {
  /** The handler name: `configure`, `createContainer`, ... */
  readonly method: K;
  /** The lifecycle event the call delivers; undefined for configure, synchronize, shutdown and validateContainerAdjustment. */
  readonly event: Event | undefined;
  /** The revision the runtime called in. */
  readonly revision: Revision;
  /** The plugin: its index, name and `NN-name`. */
  readonly plugin: PluginIdentity & { readonly id: string };
  /** The request, in v1beta1 form whatever the runtime speaks. */
  readonly request: PluginRequest<K>;
  /** The handler's context: the call's signal and deadline. */
  readonly ctx: HandlerContext;
  /** The ttrpc metadata the call came with (W3C `traceparent`, for one). */
  readonly metadata: readonly KeyValue[];
}

/** A call to the plugin, one of PluginCallOf's by method: narrowing `method` narrows `request`. */
export type PluginCall = { [K in PluginMethodName]: PluginCallOf<K> }[PluginMethodName];

/** What a call is answered with: a message, a plain object of its fields, or nothing (an empty one). */
export type PluginAnswer = { [K in PluginMethodName]: Loose<PluginResponse<K>> }[PluginMethodName] | undefined;

/**
 * Wraps every call the runtime makes to the plugin, whether or not it has a handler for it: the
 * last step is the plugin's own part (for Configure, the subscription it answers with; for a
 * Synchronize in pages, each page) and the handler. What the chain resolves with is the answer;
 * what it rejects with fails the call, as a handler's error does.
 */
export type PluginInterceptor = Interceptor<PluginCall, PluginAnswer>;
