import { describe, expect, it } from "vitest";
import { type GrowthSample, LIMITS, judgeGrowth, slope } from "../../../bench/soak/growth.js";

/** Samples every 5 s for `seconds`, with `rss(t)` and `fds(t)`. */
function run(seconds: number, rss: (t: number) => number, fds: (t: number) => number): GrowthSample[] {
  const out: GrowthSample[] = [];
  for (let t = 5; t <= seconds; t += 5) out.push({ t, rssKiB: rss(t), fds: fds(t) });
  return out;
}

describe("soak growth", () => {
  it("fits the least-squares slope", () => {
    expect(slope([0, 1, 2, 3], [1, 3, 5, 7])).toBe(2);
    expect(slope([0, 1, 2, 3], [5, 5, 5, 5])).toBe(0);
    expect(slope([1], [1])).toBe(0);
  });

  it("passes a steady state that wobbles, after the warm-up", () => {
    // Fast growth in the first minute (warm-up), then plugins coming and going.
    const samples = run(600, (t) => (t < 60 ? 80_000 + t * 500 : 110_000 + ((t / 5) % 3) * 900), (t) => 30 + ((t / 5) % 4));
    const g = judgeGrowth(samples, 600);
    expect(g.judged).toBe(true);
    expect(g.failures).toEqual([]);
    expect(Math.abs(g.fdsPerMin)).toBeLessThan(LIMITS.fdsPerMin);
  });

  it("fails descriptors that grow with every restart, and memory that grows without bound", () => {
    // One descriptor leaked every 20 s, 10 MiB a minute.
    const samples = run(600, (t) => 100_000 + (t / 60) * 10_240, (t) => 30 + Math.floor(t / 20));
    const g = judgeGrowth(samples, 600);
    expect(g.failures).toEqual([
      "soak: open file descriptors grow by 3.00 a minute over 540 s (limit 1)",
      "soak: resident memory grows by 10240 KiB a minute over 540 s (limit 2048)",
    ]);
  });

  it("reports but does not judge a run too short for a slope to mean anything", () => {
    const g = judgeGrowth(run(30, (t) => 100_000 + t * 1000, (t) => 30 + t), 30);
    expect(g.judged).toBe(false);
    expect(g.fdsPerMin).toBeCloseTo(60, 6);
    expect(g.failures).toEqual([]);
  });
});
