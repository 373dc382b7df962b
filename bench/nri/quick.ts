/**
 * `tsx bench/nri/quick.ts PHASES [pairings...]`: one session per plugin count and pairing with the
 * given phases (phases.ts) on the synthetic request, each phase's figures printed; for profiling
 * work. The figures `npm run bench` reports come from bench/main.ts.
 */
import { socketDir } from "../../test/interop/support.js";
import { buildPrograms, writeRequest } from "./e2e.js";
import { type Impl, runSession } from "./session.js";

const phases = process.argv[2] ?? "warm,steady:3";
const wanted = process.argv.slice(3);
const programs = buildPrograms();
const request = writeRequest(socketDir());
const pairings = (wanted.length > 0 ? wanted : ["TS+TS", "Go+Go"]).map((p) => p.split("+") as [Impl, Impl]);
for (const n of [1, 3]) {
  for (const [rt, pl] of pairings) {
    const s = await runSession(programs, { runtime: rt, plugin: pl, plugins: n, request: request.path, phases });
    for (const p of s.phases) {
      console.log(`${n} ${rt}+${pl} ${p.phase} cycles ${p.cycles} events/s ${p.events_per_sec.toFixed(0)} p50 ${p.p50_us.toFixed(0)} p99 ${p.p99_us.toFixed(0)} cpu/event ${p.cpu_us_per_event.toFixed(0)} µs`);
    }
    console.log(`${n} ${rt}+${pl} peak RSS ${(s.memory.runtime.hwm / 1024).toFixed(1)} / ${(Math.max(...s.memory.plugins.map((m) => m.hwm)) / 1024).toFixed(1)} MiB`);
  }
}
