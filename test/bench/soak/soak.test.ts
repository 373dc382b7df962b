import { readFileSync, rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runSoak, soakOptions } from "../../../bench/soak/soak.js";
import { summary } from "../../../bench/soak/summary.js";
import { seed } from "../../support/fc.js";
import { useGoPeers } from "../../support/go-peers.js";
import { linux, prerequisites } from "../../support/prerequisites.js";

const gate = prerequisites("soak", "the soak run (it reads /proc)", [linux]);

describe.skipIf(!gate.ok)("soak", () => {
  const { hasGo, bin } = useGoPeers({ soak: ["nri-peer", "nri-peer-soak"] });

  it("lifecycles through three plugin kills and restarts: every event settles, restarted plugins register again and serve, nothing leaks", async () => {
    const lines: string[] = [];
    // Its extent is a count of kills, not a time: a slow machine runs longer, never less.
    const result = await runSoak(soakOptions({ kills: 3, seed, sampleEverySeconds: 1, meanKillMs: 1200, goPeer: hasGo ? bin.soak : undefined, print: (l) => lines.push(l) }));
    console.log(summary(result).join("\n"));
    expect(result.failures).toEqual([]);
    const c = result.counts;
    expect(c.pending).toBe(0);
    expect(c.ok + c.error).toBe(c.issued);
    expect(c.ok).toBeGreaterThan(0);
    expect(result.kills).toBeGreaterThanOrEqual(3);
    expect(result.restarts).toBe(result.kills + result.selfExits);
    // Every process registered, unless it was killed (or closed by the runtime) before.
    const processes = result.plugins + result.restarts;
    expect(result.registrations).toBeLessThanOrEqual(processes - result.killsBeforeRegistered);
    expect(result.registrations).toBeGreaterThanOrEqual(processes - result.killsBeforeRegistered - result.selfExits);
    expect(result.fds.after).toBeLessThanOrEqual(result.fds.baseline);
    const csv = readFileSync(result.csvPath, "utf8").trimEnd().split("\n");
    expect(csv[0]).toBe("t_s,issued,ok,error,pending,events_per_s,rss_kib,heap_kib,fds,plugins,kills,restarts,registrations");
    // The header and at least the line sampled when the lifecycles stopped.
    expect(csv.length).toBeGreaterThanOrEqual(2);
    expect(csv.slice(1).every((l) => l.split(",").length === 13)).toBe(true);
    expect(lines).toEqual(expect.arrayContaining(csv));
    // The run's directory (CSV, plugin logs) is kept only when the run failed.
    rmSync(result.dir, { recursive: true, force: true });
  }, 180_000);
});
