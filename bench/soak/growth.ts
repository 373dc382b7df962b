/**
 * Whether memory or file descriptors grew over a soak: least-squares slopes over the samples
 * after a warm-up, and the thresholds beyond which growth counts as a leak. Only clear leaks
 * fail a run: a steady state wobbles with plugins coming and going and with garbage collection.
 */

/** One sample of the runtime process. */
export interface GrowthSample {
  /** Seconds since the start of the run. */
  readonly t: number;
  readonly rssKiB: number;
  readonly fds: number;
}

/** The fitted slopes, per minute, and any leak found. */
export interface Growth {
  /** Seconds of samples the slopes are fitted over (after the warm-up). */
  readonly windowS: number;
  readonly rssKiBPerMin: number;
  readonly fdsPerMin: number;
  /** Whether the window was long enough to judge. */
  readonly judged: boolean;
  readonly failures: string[];
}

/** Growth limits: anything above is a leak. */
export const LIMITS = {
  /** Samples of the first fifth of a run, at most this many seconds, are warm-up. */
  warmupS: 60,
  /** A window shorter than this is reported but not judged: a slope over it is mostly noise. */
  minJudgedS: 240,
  /** File descriptors: a leak of one per plugin restart would show as tens per minute. */
  fdsPerMin: 1,
  /** Resident memory, in KiB per minute (2 MiB/min is 120 MiB an hour). */
  rssKiBPerMin: 2048,
} as const;

/** The least-squares slope of y over x; 0 with fewer than two distinct x. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i]!;
    sy += ys[i]!;
  }
  const mx = sx / n;
  const my = sy / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    sxy += dx * (ys[i]! - my);
    sxx += dx * dx;
  }
  return sxx === 0 ? 0 : sxy / sxx;
}

/** Fits the slopes over the samples after the warm-up of a run of `durationS` and judges them. */
export function judgeGrowth(samples: readonly GrowthSample[], durationS: number): Growth {
  const warmup = Math.min(LIMITS.warmupS, durationS / 5);
  const window = samples.filter((s) => s.t >= warmup);
  const ts = window.map((s) => s.t / 60);
  const windowS = window.length < 2 ? 0 : window[window.length - 1]!.t - window[0]!.t;
  const rssKiBPerMin = slope(ts, window.map((s) => s.rssKiB));
  const fdsPerMin = slope(ts, window.map((s) => s.fds));
  const judged = windowS >= LIMITS.minJudgedS;
  const failures: string[] = [];
  if (judged && fdsPerMin > LIMITS.fdsPerMin) {
    failures.push(`soak: open file descriptors grow by ${fdsPerMin.toFixed(2)} a minute over ${Math.round(windowS)} s (limit ${LIMITS.fdsPerMin})`);
  }
  if (judged && rssKiBPerMin > LIMITS.rssKiBPerMin) {
    failures.push(`soak: resident memory grows by ${Math.round(rssKiBPerMin)} KiB a minute over ${Math.round(windowS)} s (limit ${LIMITS.rssKiBPerMin})`);
  }
  return { windowS, rssKiBPerMin, fdsPerMin, judged, failures };
}
