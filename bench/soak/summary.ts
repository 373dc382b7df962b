import type { SoakResult } from "./soak.js";

/** The figures of a run, one per line, for people. */
export function summary(r: SoakResult): string[] {
  const c = r.counts;
  const lines = [
    `seed ${r.seed}; ${r.seconds.toFixed(0)} s driven; CSV ${r.csvPath}`,
    `events: ${c.issued} issued, ${c.ok + c.error} settled (${c.ok} ok, ${c.error} error), ${c.pending} pending; ${r.eventsPerSecond.toFixed(0)} events/s`,
    `latency: at most ${r.maxLatencyMs.toFixed(0)} ms from issue, ${r.maxTurnMs.toFixed(0)} ms from its turn`,
    `plugins: ${r.plugins}; ${r.kills} kills (${r.killsBeforeRegistered} before registration), ${r.restarts} restarts, ${r.registrations} registrations, ${r.selfExits} exits after the runtime closed them`,
    `runtime: ${r.synchronizations} synchronizations, ${r.unsolicitedUpdates} unsolicited updates`,
    `RSS: ${r.rssKiB.first} KiB first sample, ${r.rssKiB.max} max, ${r.rssKiB.last} last; slope ${r.growth.rssKiBPerMin.toFixed(1)} KiB/min`,
    `fds: ${r.fds.baseline} before, ${r.fds.max} max, ${r.fds.after} after; slope ${r.growth.fdsPerMin.toFixed(3)}/min`,
    `slopes over ${r.growth.windowS.toFixed(0)} s after the warm-up${r.growth.judged ? "" : " (too short to judge)"}`,
  ];
  for (const [m, n] of r.errors) lines.push(`event error x${n}: ${m}`);
  for (const [m, n] of r.runtimeLog) lines.push(`runtime log x${n}: ${m}`);
  return lines;
}
