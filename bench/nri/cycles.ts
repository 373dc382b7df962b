/** The cycle figures both bench runtimes print (the Go twin prints the same keys). */
export interface CycleFigures {
  cycles: number;
  events_per_sec: number;
  cycles_per_sec: number;
  p50_us: number;
  p99_us: number;
}

/**
 * Cycles of warm-up: at least this many and at least one second (at most 30 s). A JIT reaches
 * its steady state after a number of calls, not of seconds: at 3 plugins the first seconds run
 * partly unoptimized code. The Go twin warms up by the same rule.
 */
export const WARMUP_CYCLES = 1500;

/** Runs `cycle` for the warm-up, then for `seconds`, one cycle at a time. */
export async function measureCycles(cycle: () => Promise<void>, seconds: number): Promise<CycleFigures> {
  const t0 = performance.now();
  for (let n = 0; (n < WARMUP_CYCLES || performance.now() - t0 < 1000) && performance.now() - t0 < 30_000; n++) await cycle();
  const lat: number[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    const t0 = performance.now();
    await cycle();
    lat.push((performance.now() - t0) * 1000);
  }
  const elapsed = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  const pct = (p: number): number => lat[Math.floor(p * (lat.length - 1))] ?? 0;
  return {
    cycles: lat.length,
    events_per_sec: (3 * lat.length) / elapsed,
    cycles_per_sec: lat.length / elapsed,
    p50_us: pct(0.5),
    p99_us: pct(0.99),
  };
}
