import { clearTimeout as clearNodeTimeout, setTimeout as nodeTimeout } from "node:timers";
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
 * What the running tests still wait for. A wait has no deadline of its own: the test's timeout
 * bounds it, and when a test times out, setup.ts names the waits still open, so a hang says
 * what it hung on. (A deadline per wait would be a guess at the machine's speed.)
 */
const open = new Map<object, () => string>();

/** Resolves or rejects as `p` does; until then `what` is named if the test times out. */
export async function waitFor<T>(p: Promise<T>, what: string | (() => string)): Promise<T> {
  const key = {};
  open.set(key, typeof what === "string" ? () => what : what);
  try {
    return await p;
  } finally {
    open.delete(key);
  }
}

/** The waits open now, each said as `what`; setup.ts reads them when a test times out. */
export function openWaits(): string[] {
  return [...open.values()].map((what) => what());
}

/** Forgets every open wait and stops every `eventually` still polling (a test that timed out left them). */
export function endWaits(): void {
  open.clear();
  for (const stop of polls) stop();
  polls.clear();
}

const polls = new Set<() => void>();

/**
 * Resolves once `condition` holds, checking every millisecond or so (on Node's own timer, which
 * keeps running while a test fakes the global ones). It has no deadline: see `open`.
 */
export function eventually(condition: () => boolean, what: string): Promise<void> {
  return waitFor(
    new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const stop = (): void => clearNodeTimeout(timer);
      const check = (): void => {
        if (condition()) {
          polls.delete(stop);
          return resolve();
        }
        timer = nodeTimeout(check, 1);
      };
      polls.add(stop);
      check();
    }),
    what,
  );
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
