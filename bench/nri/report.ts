/** The markdown tables of the NRI end-to-end regimes and of the busy-polling study. */
import { IDLE_MS, IDLE_QUIET_MS, type PhaseResult, type ProcessMemory, SAMPLE_MS, type SessionResult } from "./session.js";
import { BASE, type ByRow, FOOTPRINT_FRESH_ROWS, FRESH_ROWS, type FootprintResults, type Row, footprintRows, type NriResults, OPERATION_ROWS, type OperationsResults, PINNINGS, type PollingResults, ROWS } from "./suite.js";

export const fmt = (n: number, digits = 0): string => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The q-quantile of samples (nearest rank below, as the runtimes compute it). */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(q * (s.length - 1))] ?? Number.NaN;
}

const MIB = 1024;

/** The phase named `name` of a session. */
function phase(s: SessionResult, name: string): PhaseResult {
  const p = s.phases.find((x) => x.phase === name);
  if (p === undefined) throw new Error(`bench: no ${name} phase in a session`);
  return p;
}

/** Median ratio against the base row of the same round, with the lowest and highest. */
function ratioOf(rows: ByRow, label: string, value: (s: SessionResult) => number): { mid: number; lo: number; hi: number; all: number[] } {
  const mine = rows[label]!;
  const base = rows[BASE]!;
  const all = mine.map((s, r) => value(s) / value(base[r]!));
  return { mid: median(all), lo: Math.min(...all), hi: Math.max(...all), all };
}

function ratioCell(r: { mid: number; lo: number; hi: number; all: number[] }, bold: boolean): string {
  const mid = `×${fmt(r.mid, 2)}`;
  return `${bold ? `**${mid}**` : mid}${r.all.length > 1 ? ` (${fmt(r.lo, 2)}–${fmt(r.hi, 2)})` : ""}`;
}

/** The session of the median round by `value`. */
function medianSession(runs: SessionResult[], value: (s: SessionResult) => number): SessionResult {
  const order = runs.map((_, i) => i).sort((a, b) => value(runs[a]!) - value(runs[b]!));
  return runs[order[(runs.length - 1) >> 1]!]!;
}

const cpuSplit = (ps: PhaseResult[]): string => {
  const ev = ps.reduce((a, p) => a + 3 * p.cycles, 0);
  const rt = ps.reduce((a, p) => a + p.cpu_ns.runtime, 0) / 1000 / ev;
  const pl = ps.reduce((a, p) => a + p.cpu_ns.plugins.reduce((x, y) => x + y, 0), 0) / 1000 / ev;
  return `${fmt(rt + pl)} (${fmt(rt)} + ${fmt(pl)})`;
};

export function nriTables(r: NriResults): string[] {
  const out: string[] = [];
  const say = (l = ""): void => void out.push(l);
  const c = r.counts;
  const rounds = `${c.rounds} interleaved round${c.rounds > 1 ? "s" : ""}`;

  say(`### Steady state`);
  say();
  say(
    `Cycles back to back after the warm-up (${c.warm ? "until two consecutive 1,000-cycle windows agree within 5%, at most 60 s" : "none: quick mode"}), then ${c.steadySeconds} s. ` +
      `Ratio: events/s ÷ Go + Go's of the same round, median of ${rounds} (lowest–highest); events/s, latencies and warm-up from the median round; ` +
      `CPU: every process's CPU time per event, all rounds, runtime + plugins.`,
  );
  say();
  say("| plugins | request | runtime + plugins | events/s | ratio (range) | cycle p50 / p99 µs | p99 ratio | warm-up cycles | CPU µs/event |");
  say("|---|---|---|---|---|---|---|---|---|");
  for (const [n, b] of Object.entries(r.byPlugins)) {
    for (const p of r.payloads) {
      const rows = b.longLived[p.name]!;
      for (const row of ROWS) {
        const eps = (s: SessionResult) => phase(s, "steady").events_per_sec;
        const mid = medianSession(rows[row.label]!, eps);
        const st = phase(mid, "steady");
        const warm = mid.phases.find((x) => x.phase === "warm");
        const warmCell = warm === undefined ? "–" : `${fmt(c.fresh + warm.cycles)}${warm.converged === true ? "" : " (not converged)"}`;
        say(
          `| ${n} | ${p.name} | ${row.label} | ${fmt(st.events_per_sec)} | ${ratioCell(ratioOf(rows, row.label, eps), row.label === "TS + TS")} | ` +
            `${fmt(st.p50_us)} / ${fmt(st.p99_us)} | ×${fmt(median(ratioOf(rows, row.label, (s) => phase(s, "steady").p99_us).all), 2)} | ${warmCell} | ` +
            `${cpuSplit(rows[row.label]!.map((s) => phase(s, "steady")))} |`,
        );
      }
    }
  }

  say();
  say(`### A fresh process's first cycles`);
  say();
  say(
    `New runtime and plugin processes each round; the first ${fmt(c.fresh)} cycles back to back from the first event (after one CreateContainer that checks every plugin answers). ` +
      `Ratio as above; the last column is events/s of the first and of the last ${fmt(250)} cycles, median round.`,
  );
  say();
  say("| plugins | request | runtime + plugins | events/s | ratio (range) | cycle p50 / p99 µs | p99 ratio | first → last 250 events/s | CPU µs/event |");
  say("|---|---|---|---|---|---|---|---|---|");
  for (const [n, b] of Object.entries(r.byPlugins)) {
    for (const p of r.payloads) {
      const rows = b.longLived[p.name]!;
      for (const row of ROWS) {
        const eps = (s: SessionResult) => phase(s, "fresh").events_per_sec;
        const f = phase(medianSession(rows[row.label]!, eps), "fresh");
        const w = f.windows ?? [];
        say(
          `| ${n} | ${p.name} | ${row.label} | ${fmt(f.events_per_sec)} | ${ratioCell(ratioOf(rows, row.label, eps), row.label === "TS + TS")} | ` +
            `${fmt(f.p50_us)} / ${fmt(f.p99_us)} | ×${fmt(median(ratioOf(rows, row.label, (s) => phase(s, "fresh").p99_us).all), 2)} | ` +
            `${w.length > 0 ? `${fmt(w[0]!)} → ${fmt(w.at(-1)!)}` : "–"} | ${cpuSplit(rows[row.label]!.map((s) => phase(s, "fresh")))} |`,
        );
      }
    }
  }

  const main = r.payloads[0]!.name;
  say();
  say(`### Sparse cycles`);
  say();
  say(
    `One cycle every 20 ms or 100 ms (the next starts that long after the previous one ended), ${main} request. Warm: after the steady state of the long-lived pair; ` +
      `fresh: new processes, from their first event. Latencies pooled over ${rounds}; n = samples; ratios ÷ Go + Go; CPU: every process's CPU time per event including the idle time between cycles, runtime + plugins.`,
  );
  say();
  say("| plugins | spacing | processes | runtime + plugins | n | cycle p50 / p99 µs | p50 ratio | p99 ratio | CPU µs/event |");
  say("|---|---|---|---|---|---|---|---|---|");
  for (const [n, b] of Object.entries(r.byPlugins)) {
    for (const ms of [20, 100] as const) {
      for (const state of ["warm", "fresh"] as const) {
        const rows = state === "warm" ? b.longLived[main]! : b.freshSparse[ms];
        const phasesOf = (label: string) => rows[label]!.map((s) => phase(s, `sparse:${ms}`));
        const pooled = (label: string) => phasesOf(label).flatMap((p) => p.lat ?? []);
        const base = pooled(BASE);
        for (const row of state === "warm" ? ROWS : FRESH_ROWS) {
          const lat = pooled(row.label);
          const [p50, p99] = [quantile(lat, 0.5), quantile(lat, 0.99)];
          say(
            `| ${n} | ${ms} ms | ${state} | ${row.label} | ${lat.length} | ${fmt(p50)} / ${fmt(p99)} | ×${fmt(p50 / quantile(base, 0.5), 2)} | ×${fmt(p99 / quantile(base, 0.99), 2)} | ${cpuSplit(phasesOf(row.label))} |`,
          );
        }
      }
    }
  }

  out.push(...firstCyclesTable(Object.fromEntries(Object.entries(r.byPlugins).map(([n, b]) => [n, b.freshSparse[20]])), rounds, main));
  out.push(...memoryTable(Object.fromEntries(Object.entries(r.byPlugins).map(([n, b]) => [n, b.longLived[main]!])), () => ROWS, main));
  say();
  say(`### Allocation`);
  say();
  say(
    `JavaScript heap bytes allocated per event by the TypeScript runtime and by each TypeScript plugin (heap growth plus what each collection freed, from V8's per-collection statistics), ` +
      `and collections per 1,000 events; one extra session per plugin count with the meter on, ${main} request.`,
  );
  say();
  say("| plugins | phase | runtime B/event | plugin B/event | runtime GCs / 1k events | plugin GCs / 1k events |");
  say("|---|---|---|---|---|---|");
  for (const [n, b] of Object.entries(r.byPlugins)) {
    for (const p of b.alloc.phases) {
      if (p.phase === "warm") continue;
      const ev = 3 * p.cycles;
      const pl = p.plugin_alloc ?? [];
      const plBytes = median(pl.map((x) => x.alloc_bytes));
      const plGcs = median(pl.map((x) => x.gcs));
      say(`| ${n} | ${p.phase === "fresh" ? `first ${fmt(p.cycles)} cycles` : "steady state"} | ${fmt((p.alloc_bytes ?? Number.NaN) / ev)} | ${fmt(plBytes / ev)} | ${fmt(((p.gcs ?? Number.NaN) * 1000) / ev, 1)} | ${fmt((plGcs * 1000) / ev, 1)} |`);
    }
  }
  return out;
}

export function pollingTables(r: PollingResults): string[] {
  const out: string[] = [];
  const say = (l = ""): void => void out.push(l);
  say(`### Busy polling`);
  say();
  say(
    `The TypeScript pair with busy polling on (the default: 250 µs, in sustained runs of messages) and off, and the Go pair, with the processes free, all on CPU 0 (\`taskset -c 0\`), or the runtime on CPU 0 and the plugins on CPU 1. ` +
      `${r.counts.rounds} interleaved round${r.counts.rounds > 1 ? "s" : ""}; steady events/s median round; sparse latencies pooled (n samples); CPU per event at 20 ms, runtime + plugins.`,
  );
  say();
  say("| plugins | processes | runtime + plugins | steady events/s | 20 ms warm p50 / p99 µs (n) | 100 ms warm p50 / p99 µs (n) | 20 ms fresh p50 / p99 µs (n) | CPU µs/event at 20 ms |");
  say("|---|---|---|---|---|---|---|---|");
  for (const [n, byPin] of Object.entries(r.byPlugins)) {
    for (const pin of PINNINGS) {
      const { warm, fresh } = byPin[pin];
      for (const label of Object.keys(warm)) {
        const lat = (rows: ByRow, name: string) => {
          const l = rows[label]!.flatMap((s) => phase(s, name).lat ?? []);
          return `${fmt(quantile(l, 0.5))} / ${fmt(quantile(l, 0.99))} (${l.length})`;
        };
        const eps = medianSession(warm[label]!, (s) => phase(s, "steady").events_per_sec);
        say(
          `| ${n} | ${pin} | ${label} | ${fmt(phase(eps, "steady").events_per_sec)} | ${lat(warm, "sparse:20")} | ${lat(warm, "sparse:100")} | ${lat(fresh, "sparse:20")} | ${cpuSplit(warm[label]!.map((s) => phase(s, "sparse:20")))} |`,
        );
      }
    }
  }
  return out;
}

/** The table of what operators turn on (suite.ts OPERATION_ROWS), against Go + Go of the same round. */
export function operationsTables(r: OperationsResults): string[] {
  const out: string[] = [];
  const say = (l = ""): void => void out.push(l);
  const c = r.counts;
  const rows = r.rows;
  say(`### Interceptors, metrics and traces`);
  say();
  say(
    `One plugin, the recorded request. The TypeScript pair with nothing on, with one pass-through interceptor on each side, with Prometheus metrics (prom-client), with traces ` +
      `(@opentelemetry/api, no SDK registered) and with all three. Steady state after the warm-up: events/s ÷ Go + Go's of the same round, median of ${c.rounds} interleaved round${c.rounds > 1 ? "s" : ""} (lowest–highest); ` +
      `sparse cycles 20 ms apart, warm: p50 and p99 pooled over the rounds, ÷ Go + Go's; CPU: every process's CPU time per event, steady state, runtime + plugin.`,
  );
  say();
  say("| runtime + plugin | steady events/s ratio (range) | steady CPU µs/event | 20 ms apart p50 / p99 µs | p50 / p99 ratio |");
  say("|---|---|---|---|---|");
  const pooled = (label: string, q: number) => quantile(rows[label]!.flatMap((s) => phase(s, "sparse:20").lat ?? []), q);
  for (const row of OPERATION_ROWS) {
    const eps = (s: SessionResult) => phase(s, "steady").events_per_sec;
    const p50 = pooled(row.label, 0.5);
    const p99 = pooled(row.label, 0.99);
    say(
      `| ${row.label} | ${ratioCell(ratioOf(rows, row.label, eps), row.label === "TS + TS")} | ${cpuSplit(rows[row.label]!.map((s) => phase(s, "steady")))} | ` +
        `${fmt(p50)} / ${fmt(p99)} | ×${fmt(p50 / pooled(BASE, 0.5), 2)} / ×${fmt(p99 / pooled(BASE, 0.99), 2)} |`,
    );
  }
  return out;
}

/** A fresh process's cycles 20 ms apart, stretch by stretch, against Go + Go's (`fresh`: sessions of FRESH_ROWS by plugin count). */
function firstCyclesTable(fresh: Record<string, ByRow>, rounds: string, main: string, freshRows: readonly Row[] = FRESH_ROWS): string[] {
  const out: string[] = [];
  const say = (l = ""): void => void out.push(l);
  say();
  say(`### First cycles, one by one`);
  say();
  say(
    `A fresh process's cycles 20 ms apart (the fresh sparse sessions above, ${main} request): the median latency of each stretch of cycles over the ${rounds}, µs, ` +
      `and its ratio to Go + Go's. The warm-up (plugin/warm-up.ts, runtime/warm-up.ts) runs before the first event: the \`warm-up\` rows are the same processes asked to run it (it is off by default).`,
  );
  say();
  const stretches: [number, number][] = [[1, 1], [2, 2], [3, 3], [4, 10], [11, 25], [26, 50], [51, 100]];
  say(`| plugins | runtime + plugins | ${stretches.map(([a, b]) => (a === b ? `#${a}` : `#${a}–${b}`)).join(" | ")} |`);
  say(`|---|---|${stretches.map(() => "---|").join("")}`);
  for (const [n, rows] of Object.entries(fresh)) {
    const stretch = (label: string, [from, to]: [number, number]) => median(rows[label]!.flatMap((s) => (phase(s, "sparse:20").lat ?? []).slice(from - 1, to)));
    for (const row of freshRows) {
      const cells = stretches.map((st) => {
        const v = stretch(row.label, st);
        return Number.isNaN(v) ? "–" : `${fmt(v)} ×${fmt(v / stretch(BASE, st), 2)}`;
      });
      say(`| ${n} | ${row.label} | ${cells.join(" | ")} |`);
    }
  }
  return out;
}

/** Each process's memory in long-lived sessions (`longLived` by plugin count, rows of `rowsOf(n)`). */
function memoryTable(longLived: Record<string, ByRow>, rowsOf: (n: number) => readonly Row[], main: string): string[] {
  const out: string[] = [];
  const say = (l = ""): void => void out.push(l);
  say();
  say(`### Memory`);
  say();
  say(
    `What each process holds of its own: anonymous memory (RssAnon, /proc/PID/status) once every plugin is registered, before any event, when the processes have sat idle (at least ${fmt(IDLE_MS / 1000, 0)} s, then until none used 1 ms of CPU in ${IDLE_QUIET_MS} ms: a warm-up done); its peak (sampled every ${SAMPLE_MS} ms and at each phase's end, over the whole session); and after the last phase (idle again, after events); ` +
      `PSS (smaps_rollup, at the end: the process's own pages plus its share of the pages it shares, mostly the engine binary's, which three plugins of one form split three ways); peak RSS (VmHWM), which counts the shared pages whole. ` +
      `Long-lived pairs (${main} request); the highest over the rounds and, for plugins, over the plugins.`,
  );
  say();
  say("| plugins | runtime + plugins | plugin idle anon | plugin peak anon | plugin anon after events | plugin PSS | plugin peak RSS | runtime idle anon | runtime peak anon | runtime PSS | runtime peak RSS |");
  say("|---|---|---|---|---|---|---|---|---|---|---|");
  for (const [n, byRow] of Object.entries(longLived)) {
    for (const row of rowsOf(Number(n))) {
      const runs = byRow[row.label]!;
      const m = (f: (s: SessionResult) => number[]) => `${fmt(Math.max(...runs.flatMap(f)) / MIB, 1)} MiB`;
      const plugin = (k: keyof ProcessMemory) => m((s) => s.memory.plugins.map((p) => p[k]));
      const runtime = (k: keyof ProcessMemory) => m((s) => [s.memory.runtime[k]]);
      say(
        `| ${n} | ${row.label} | ${plugin("anonIdle")} | **${plugin("anonPeak")}** | ${plugin("anonEnd")} | ${plugin("pss")} | ${plugin("hwm")} | ${runtime("anonIdle")} | ${runtime("anonPeak")} | ${runtime("pss")} | ${runtime("hwm")} |`,
      );
    }
  }

  return out;
}

/**
 * The tables of `--only footprint`: each process's memory, with the memory settings of a plugin's
 * process; steady events/s and warm cycles 20 ms apart against Go + Go; a fresh process's first
 * cycles 20 ms apart, with and without the warm-up, pooled and stretch by stretch.
 */
export function footprintTables(r: FootprintResults): string[] {
  const out: string[] = [];
  const say = (l = ""): void => void out.push(l);
  const c = r.counts;
  const rounds = `${c.rounds} interleaved round${c.rounds > 1 ? "s" : ""}`;
  const main = r.payload.name;
  out.push(...memoryTable(Object.fromEntries(Object.entries(r.byPlugins).map(([n, b]) => [n, b.longLived])), footprintRows, main));
  say();
  say(`### Throughput and warm cycles with each setting`);
  say();
  say(
    `The long-lived sessions above: steady state after the warm-up (${c.warm ? "until two consecutive 1,000-cycle windows agree within 5%, at most 60 s" : "none: quick mode"}), then ${c.steadySeconds} s, ` +
      `events/s ÷ Go + Go's of the same round, median of ${rounds} (lowest–highest); then ${c.warmSparse[20]} cycles 20 ms apart, p50 and p99 pooled over the rounds, ÷ Go + Go's.`,
  );
  say();
  say("| plugins | runtime + plugins | events/s | ratio (range) | 20 ms apart p50 / p99 µs | p50 / p99 ratio |");
  say("|---|---|---|---|---|---|");
  for (const [n, b] of Object.entries(r.byPlugins)) {
    const rows = b.longLived;
    const pooled = (label: string, q: number) => quantile(rows[label]!.flatMap((s) => phase(s, "sparse:20").lat ?? []), q);
    for (const row of footprintRows(Number(n))) {
      const eps = (s: SessionResult) => phase(s, "steady").events_per_sec;
      const [p50, p99] = [pooled(row.label, 0.5), pooled(row.label, 0.99)];
      say(
        `| ${n} | ${row.label} | ${fmt(phase(medianSession(rows[row.label]!, eps), "steady").events_per_sec)} | ${ratioCell(ratioOf(rows, row.label, eps), false)} | ` +
          `${fmt(p50)} / ${fmt(p99)} | ×${fmt(p50 / pooled(BASE, 0.5), 2)} / ×${fmt(p99 / pooled(BASE, 0.99), 2)} |`,
      );
    }
  }
  say();
  say(`### A fresh process's first ${c.freshSparse[20]} cycles 20 ms apart`);
  say();
  say(`New processes each round, from their first event; p50 and p99 pooled over the ${rounds}, ÷ Go + Go's; n = samples.`);
  say();
  say("| plugins | runtime + plugins | n | p50 / p99 µs | p50 ratio | p99 ratio |");
  say("|---|---|---|---|---|---|");
  for (const [n, b] of Object.entries(r.byPlugins)) {
    const pooled = (label: string) => b.fresh[label]!.flatMap((s) => phase(s, "sparse:20").lat ?? []);
    const base = pooled(BASE);
    for (const row of FOOTPRINT_FRESH_ROWS) {
      const lat = pooled(row.label);
      const [p50, p99] = [quantile(lat, 0.5), quantile(lat, 0.99)];
      say(`| ${n} | ${row.label} | ${lat.length} | ${fmt(p50)} / ${fmt(p99)} | ×${fmt(p50 / quantile(base, 0.5), 2)} | ×${fmt(p99 / quantile(base, 0.99), 2)} |`);
    }
  }
  out.push(...firstCyclesTable(Object.fromEntries(Object.entries(r.byPlugins).map(([n, b]) => [n, b.fresh])), rounds, main, FOOTPRINT_FRESH_ROWS));
  return out;
}
