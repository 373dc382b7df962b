import type { CallContext } from "../ttrpc/server.js";
import { type MetadataInit, toKeyValues } from "../ttrpc/metadata.js";

/** What a test gives callContext; everything is optional. */
export interface CallContextInit {
  /** The method the handler is called for (`CreateContainer`). Default `CreateContainer`. */
  method?: string;
  /** Request metadata: a record (arrays for repeated keys) or entries. Default none. */
  metadata?: MetadataInit;
  /** The call's timeout: sets the deadline, and the signal aborts when it passes. Default none. */
  timeoutMs?: number;
  /** The call's signal (abort it to play a runtime giving up). Default: one never aborted. */
  signal?: AbortSignal;
}

/**
 * A CallContext for calling one plugin handler directly in a unit test, as the plugin's endpoint
 * would call it: `await handlers.createContainer!(request, callContext())`.
 */
export function callContext(init: CallContextInit = {}): CallContext {
  const t = init.timeoutMs;
  const timer = t === undefined ? undefined : AbortSignal.timeout(t);
  const signals = [init.signal, timer].filter((s): s is AbortSignal => s !== undefined);
  return {
    service: "nri.pkg.api.v1beta1.Plugin",
    method: init.method ?? "CreateContainer",
    metadata: toKeyValues(init.metadata),
    timeoutNano: t === undefined ? 0 : Math.round(t * 1e6),
    deadline: t === undefined ? undefined : performance.now() + t,
    signal: signals.length === 0 ? new AbortController().signal : signals.length === 1 ? signals[0]! : AbortSignal.any(signals),
  };
}
