import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Waiting in tests. Tests wait on events or conditions, never for a fixed time: `sleep` is for
 * handlers that must be slow on purpose (a peer's Sleep method, a handler outliving a deadline).
 */

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });
}

/**
 * Resolves once `condition` holds, checking after every turn of the event loop (I/O included);
 * rejects naming `what` if it still does not hold after `timeoutMs`.
 */
export function eventually(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const check = (): void => {
      if (condition()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`test: timed out after ${timeoutMs} ms waiting for ${what}`));
      setTimeout(check, 1);
    };
    check();
  });
}

/** A promise and the function that settles it, for waiting on a callback. */
export function signal<T = void>(): { promise: Promise<T>; fire: (value: T) => void } {
  let fire!: (value: T) => void;
  const promise = new Promise<T>((r) => (fire = r));
  return { promise, fire };
}

/** Counts of the active handles and requests Node reports, by type (`Timeout`, `PipeWrap`, ...). */
export function activeResources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

/**
 * Runs full garbage collections, so memory figures count what is retained, not what awaits
 * collection; the turns of the event loop between them let V8 free array buffers' memory.
 */
export async function collectGarbage(): Promise<void> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}
