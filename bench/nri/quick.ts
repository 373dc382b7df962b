/**
 * `tsx bench/nri/quick.ts [seconds] [pairings...]`: only the NRI end-to-end cycles, for profiling
 * work; the figures `npm run bench` prints come from bench/main.ts.
 */
import { socketDir } from "../../test/interop/support.js";
import { buildPrograms, runPair, writeRequest } from "./e2e.js";

const seconds = Number(process.argv[2] ?? "3");
const wanted = process.argv.slice(3);
const programs = buildPrograms();
const request = writeRequest(socketDir());
const pairings = (wanted.length > 0 ? wanted : ["TS+TS", "Go+Go", "TS+Go", "Go+TS"]).map((p) => p.split("+") as ["TS" | "Go", "TS" | "Go"]);
for (const n of [1, 3]) {
  for (const [rt, pl] of pairings) {
    const f = await runPair(programs.runtime[rt], programs.plugin[pl], n, request.path, seconds);
    console.log(`${n} ${rt}+${pl} events/s ${f.events_per_sec.toFixed(0)} p50 ${f.p50_us.toFixed(0)} p99 ${f.p99_us.toFixed(0)} rss ${(f.runtimeRssKiB / 1024).toFixed(1)}/${(Math.max(...f.pluginRssKiB) / 1024).toFixed(1)}`);
  }
}
