/**
 * `npm run bench`: every figure measured in one run on this machine, with ratios against the Go
 * reference where one exists. BENCH_SECONDS sets the length of each rps and end-to-end run
 * (default 5), BENCH_ROUNDS the interleaved rounds of the end-to-end runs (default 3).
 * With --write-readme the tables replace the block between the bench markers in README.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { goAvailable, goBuild, runPeer, socketDir, startPeer, tsCommand } from "../test/interop/support.js";
import { codecBench, codecTable } from "./codec.js";
import { decoderThroughput } from "./decoder.js";
import { inflightRss } from "./inflight.js";
import { WARMUP_CYCLES } from "./nri/cycles.js";
import { type PairFigures, buildPrograms, coldStarts, importCosts, median, medianIndex, runPair, writeRequest } from "./nri/e2e.js";
import { translateBench } from "./translate.js";

const seconds = Number(process.env.BENCH_SECONDS ?? "5");
/** Interleaved rounds of the NRI end-to-end runs (BENCH_ROUNDS, default 3). */
const rounds = Number(process.env.BENCH_ROUNDS ?? "3");
const shapes: [number, number][] = [
  [1, 100],
  [16, 100],
  [64, 100],
  [16, 4096],
  [4, 1 << 20],
];

interface Result {
  rps: number;
  p50_us: number;
  p99_us: number;
}

async function rpsRun(client: [string, string[]], server: [string, string[]], conc: number, size: number): Promise<Result> {
  const socket = join(socketDir(), "b.sock");
  const srv = startPeer(server, ["serve", "--socket", socket]);
  await srv.waitFor((l) => l === "ready");
  const run = await runPeer(client, ["bench", "--socket", socket, "--conc", String(conc), "--size", String(size), "--duration", String(seconds)]);
  srv.child.kill("SIGTERM");
  await srv.exited;
  const line = run.lines.find((l) => l.startsWith("{"));
  if (run.code !== 0 || line === undefined) throw new Error(`bench: client exited ${run.code}: ${run.stderr}`);
  return JSON.parse(line) as Result;
}

const fmt = (n: number, digits = 0): string => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  if (!goAvailable()) throw new Error("bench: the Go reference is needed for the ratios");
  const go: [string, string[]] = [goBuild("go-peer", "go-peer"), []];
  const ts = tsCommand("test/interop/ts-peer.ts");
  const pairs: [string, [string, string[]], [string, string[]]][] = [
    ["TS → TS", ts, ts],
    ["TS → Go", ts, go],
    ["Go → TS", go, ts],
    ["Go → Go", go, go],
  ];
  const out: string[] = [];
  const say = (line: string): void => {
    console.log(line);
    out.push(line);
  };

  say(`Unary echo over a unix socket, one connection, ${seconds} s per cell; client → server; ratio = rps / Go → Go rps.`);
  say("");
  say("| conc | size | " + pairs.map(([n]) => `${n} rps (p50/p99 µs)`).join(" | ") + " | TS → TS ratio |");
  say("|---|---|" + pairs.map(() => "---|").join("") + "---|");
  for (const [conc, size] of shapes) {
    const results: Result[] = [];
    for (const [, client, server] of pairs) results.push(await rpsRun(client, server, conc, size));
    const base = results[3]!.rps;
    const cells = results.map((r) => `${fmt(r.rps)} (${fmt(r.p50_us)}/${fmt(r.p99_us)}) ×${fmt(r.rps / base, 2)}`);
    say(`| ${conc} | ${size} | ${cells.join(" | ")} | **${fmt(results[0]!.rps / base, 2)}** |`);
  }
  say("");
  say("Frame decoder (sans-IO, one core), payloads fed in chunks of the given size:");
  say("");
  say("| payload | chunk | frames/s | MB/s | frames/s, every `data` view made |");
  say("|---|---|---|---|---|");
  for (const [payload, chunk] of [[64, 64 << 10], [64, 1 << 20], [64 << 10, 64 << 10], [64 << 10, 1 << 20]] as const) {
    const r = decoderThroughput(payload, chunk, 2000);
    const v = decoderThroughput(payload, chunk, 2000, true);
    say(`| ${payload} B | ${chunk >> 10} KiB | ${fmt(r.framesPerSec)} | ${fmt(r.mbPerSec)} | ${fmt(v.framesPerSec)} |`);
  }
  say("");
  say("Peak RSS of a server process holding 10,000 calls in flight (Sleep 3000 ms, one connection):");
  say("");
  say("| server | idle RSS | peak RSS | per call |");
  say("|---|---|---|---|");
  for (const [name, server] of [["nri-wire (TS)", ts], ["Go ttrpc", go]] as const) {
    const r = await inflightRss(server, 10_000);
    say(`| ${name} | ${fmt(r.idleKiB / 1024, 1)} MiB | ${fmt(r.peakKiB / 1024, 1)} MiB | ${fmt(((r.peakKiB - r.idleKiB) * 1024) / 10_000)} B |`);
  }

  say("");
  const t = translateBench(2000);
  say(`Version translation of a ${t.dedicatedBytes}-byte PostCreateContainer (realistic pod and container), ops/s:`);
  say("");
  say("| direction | tag rewriting | generated types (decode + build + encode) | ratio |");
  say("|---|---|---|---|");
  for (const [name, r] of [["StateChange → dedicated", t.stateChangeToDedicated], ["dedicated → StateChange", t.dedicatedToStateChange]] as const) {
    say(`| ${name} | ${fmt(r.rewrite)} | ${fmt(r.generated)} | ×${fmt(r.ratio, 0)} |`);
  }

  say("");
  for (const line of codecTable(await codecBench())) say(line);

  say("");
  await endToEnd(say);

  if (process.argv.includes("--write-readme")) {
    const readme = resolve(import.meta.dirname, "../README.md");
    const text = readFileSync(readme, "utf8");
    const start = "<!-- bench:start -->";
    const end = "<!-- bench:end -->";
    const a = text.indexOf(start);
    const b = text.indexOf(end);
    if (a < 0 || b < a) throw new Error("bench: README.md has no bench markers");
    writeFileSync(readme, `${text.slice(0, a + start.length)}\n${out.join("\n")}\n${text.slice(b)}`);
    console.log("bench: README.md updated");
  }
}

/** The NRI end-to-end section: lifecycle cycles and plugin cold start, TS and Go in every pairing. */
async function endToEnd(say: (line: string) => void): Promise<void> {
  const programs = buildPrograms();
  const request = writeRequest(socketDir());
  const kinds = ["TS", "Go"] as const;
  const pairings = [
    ["TS", "TS"],
    ["Go", "Go"],
    ["TS", "Go"],
    ["Go", "TS"],
  ] as const;
  say(
    `NRI end to end: runtime and plugins in separate processes, ${seconds} s of cycles after a warm-up of ${fmt(WARMUP_CYCLES)} (CreateContainer + StartContainer + PostStartContainer, ` +
      `${request.bytes}-byte CreateContainerRequest, each plugin adds one annotation and one env var); Go is containerd/nri v0.12.5 pkg/adaptation and pkg/stub. ` +
      `${rounds} interleaved rounds, every pairing once per round, each round starting one pairing later; ratios against Go runtime + Go plugins of the same round, median of the rounds (lowest–highest); ` +
      `events/s and latencies from the median round, peak RSS the highest:`,
  );
  say("");
  say("| plugins | runtime + plugins | events/s | ratio (range) | cycle p50 / p99 µs | p99 ratio | peak RSS runtime / plugin |");
  say("|---|---|---|---|---|---|---|");
  // The last row is TS + TS again with busy polling off on both sides, to show what it does.
  const noPoll = (c: (typeof programs.runtime)["TS"]): typeof c => [c[0], [...c[1], "--busy-poll", "0"]];
  const rowsOf = [
    ...pairings.map(([rt, pl]) => ({ label: `${rt} + ${pl}`, main: rt === "TS" && pl === "TS", base: rt === "Go" && pl === "Go", rt: programs.runtime[rt], pl: programs.plugin[pl] })),
    { label: "TS + TS, busy polling off", main: false, base: false, rt: noPoll(programs.runtime.TS), pl: noPoll(programs.plugin.TS) },
  ];
  const baseRow = rowsOf.findIndex((r) => r.base);
  for (const n of [1, 3]) {
    const byRow: PairFigures[][] = rowsOf.map(() => []);
    for (let r = 0; r < rounds; r++) {
      // Each round starts one pairing later, so that no pairing always runs first or right after
      // the same other one.
      for (let k = 0; k < rowsOf.length; k++) {
        const i = (k + r) % rowsOf.length;
        const row = rowsOf[i]!;
        byRow[i]!.push(await runPair(row.rt, row.pl, n, request.path, seconds));
      }
    }
    const go = byRow[baseRow]!;
    for (const [i, row] of rowsOf.entries()) {
      const runs = byRow[i]!;
      const ratios = runs.map((f, r) => f.events_per_sec / go[r]!.events_per_sec);
      const p99Ratios = runs.map((f, r) => f.p99_us / go[r]!.p99_us);
      const mid = runs[medianIndex(runs.map((f) => f.events_per_sec))]!;
      const ratio = `×${fmt(median(ratios), 2)}`;
      const range = rounds > 1 && !row.base ? ` (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)})` : "";
      const runtimeRss = Math.max(...runs.map((f) => f.runtimeRssKiB)) / 1024;
      const pluginRss = Math.max(...runs.flatMap((f) => f.pluginRssKiB)) / 1024;
      say(
        `| ${n} | ${row.label} | ${fmt(mid.events_per_sec)} | ${row.main ? `**${ratio}**` : ratio}${range} | ` +
          `${fmt(mid.p50_us)} / ${fmt(mid.p99_us)} | ×${fmt(median(p99Ratios), 2)} | ${fmt(runtimeRss, 1)} / ${fmt(pluginRss, 1)} MiB |`,
      );
    }
  }
  say("");
  const runs = 9;
  say(`Plugin cold start: process launch until the runtime has it synchronized, median of ${runs} launches (min–max):`);
  say("");
  say("| plugin \\ runtime | " + kinds.map((k) => `${k} runtime`).join(" | ") + " |");
  say("|---|" + kinds.map(() => "---|").join(""));
  for (const pl of kinds) {
    const cells = [];
    for (const rt of kinds) {
      const t = await coldStarts(programs.runtime[rt], programs.plugin[pl], runs);
      cells.push(`${fmt(median(t), 1)} ms (${fmt(Math.min(...t), 1)}–${fmt(Math.max(...t), 1)})`);
    }
    say(`| ${pl} plugin | ${cells.join(" | ")} |`);
  }
  say("");
  const imports = importCosts(programs.pluginEntry, 15);
  say(
    `Importing nri-wire/plugin (compiled): a process doing only that takes ${fmt(median(imports.importing), 1)} ms, ` +
      `\`node -e 0\` ${fmt(median(imports.bare), 1)} ms (medians of 15, interleaved).`,
  );
}

await main();
