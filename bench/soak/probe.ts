/**
 * What this process holds, read from the kernel and from Node: resident memory, open file
 * descriptors and active libuv resources. The soak's runtime runs in this process, so these
 * are the runtime's figures (plus the soak's own pipes to the plugin processes it supervises).
 */
import { readdirSync } from "node:fs";

/** Resident set size in KiB. */
export function rssKiB(): number {
  return Math.round(process.memoryUsage.rss() / 1024);
}

/** Open file descriptors of this process (Linux), not counting the one used to list them. */
export function openFds(): number {
  return readdirSync("/proc/self/fd").length - 1;
}

/** Active libuv resources (sockets, pipes, timers, child processes) by type. */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/**
 * The resource types of which there are more after than before, as `PipeWrap 3 -> 4`. Fewer is
 * no leak: a timer of the host process (a test runner's) may have ended meanwhile.
 */
export function resourcesGrown(before: Map<string, number>, after: Map<string, number>): string[] {
  const types = [...after.keys()].sort();
  return types.filter((t) => after.get(t)! > (before.get(t) ?? 0)).map((t) => `${t} ${before.get(t) ?? 0} -> ${after.get(t)}`);
}
