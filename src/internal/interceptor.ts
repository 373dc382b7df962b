/**
 * What every side's interceptors share: one shape, specialised by each side's call and result.
 * An interceptor takes the next step and returns a step of its own; in an array the first is
 * the outermost (it runs first on the way in and last on the way out).
 */

/**
 * Wraps a call: it may change the call before passing it on, answer without calling `next`,
 * rethrow or transform `next`'s error, or time the call.
 */
export type Interceptor<Call, Result> = (next: (call: Call) => Promise<Result>) => (call: Call) => Promise<Result>;

/**
 * The step that runs `interceptors` around `last`, the first interceptor outermost; undefined
 * when there are none, so that a caller keeps its direct path and pays nothing.
 */
export function chainInterceptors<Call, Result>(
  interceptors: readonly Interceptor<Call, Result>[] | undefined,
  last: (call: Call) => Promise<Result>,
): ((call: Call) => Promise<Result>) | undefined {
  if (interceptors === undefined || interceptors.length === 0) return undefined;
  let step = last;
  for (let i = interceptors.length - 1; i >= 0; i--) step = interceptors[i]!(step);
  return step;
}

/**
 * Checks an `interceptors` option where it enters: an array of functions. `what` names the
 * option in the error (`ttrpc: interceptors[1] is a string, not a function`).
 */
export function checkInterceptors<I>(what: string, interceptors: readonly I[] | undefined): readonly I[] | undefined {
  if (interceptors === undefined) return undefined;
  if (!Array.isArray(interceptors)) throw new TypeError(`${what} is a ${interceptors === null ? "null" : typeof interceptors}, not an array of functions`);
  for (const [i, f] of interceptors.entries()) {
    if (typeof f !== "function") throw new TypeError(`${what}[${i}] is a ${f === null ? "null" : typeof f}, not a function`);
  }
  return interceptors.length === 0 ? undefined : interceptors;
}
