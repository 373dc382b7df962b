import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Resolves once `check()` holds, looking again after every turn of the event loop that ran
 * I/O; rejects with `what` after `timeoutMs`. For states that no single event announces.
 */
export function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const look = (): void => {
      if (check()) return resolve();
      if (performance.now() - start > timeoutMs) return reject(new Error(`test: timed out waiting for ${what}`));
      setTimeout(look, 1);
    };
    look();
  });
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
