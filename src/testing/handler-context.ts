import type { HandlerContext } from "../api/handlers.js";

/** What a test gives handlerContext; everything is optional. */
export interface HandlerContextInit {
  /** The call's timeout: sets the deadline, and the signal aborts when it passes. Default none. */
  timeoutMs?: number;
  /** The call's signal (abort it to play a runtime giving up). Default: one never aborted. */
  signal?: AbortSignal;
}

/**
 * The second argument of a plugin handler, for calling one handler directly in a unit test as
 * the plugin (or a runtime running it as a builtin plugin) would call it:
 * `await handlers.createContainer!(request, handlerContext())`.
 */
export function handlerContext(init: HandlerContextInit = {}): HandlerContext {
  const t = init.timeoutMs;
  const signals = [init.signal, t === undefined ? undefined : AbortSignal.timeout(t)].filter((s): s is AbortSignal => s !== undefined);
  return {
    deadline: t === undefined ? undefined : performance.now() + t,
    signal: signals.length === 0 ? new AbortController().signal : signals.length === 1 ? signals[0]! : AbortSignal.any(signals),
  };
}
