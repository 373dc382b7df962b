/**
 * `npm run bench`: every figure measured in one run on this machine, with ratios against the Go
 * reference where one exists, written as markdown to docs/bench/node-<major>.md (or --out FILE)
 * with the machine, the Node and Go versions and the date.
 *
 *   npm run bench -- [--node PATH] [--quick] [--only nri|operations|footprint] [--polling] [--operations] [--out FILE] [--json FILE]
 *
 * --node runs everything (this driver, every TypeScript process) on that node binary;
 * --quick runs every section with tiny counts (a smoke run: its figures mean nothing and it
 * writes no file unless --out is given); --only nri skips the transport, codec and translation
 * sections; --polling adds the busy-polling study (sparse cycles with polling on and off, the
 * processes free, on one CPU, on separate CPUs); --operations adds the cost of interceptors,
 * Prometheus metrics and traces (suite.ts OPERATION_ROWS), and --only operations runs that alone;
 * --only footprint runs what a plugin costs a node: memory, with the memory settings of a plugin's
 * process (suite.ts MEMORY_SETTINGS), and a fresh process's first cycles with and without the warm-up. BENCH_SECONDS sets each rps run (default 5),
 * BENCH_ROUNDS the interleaved rounds of the NRI regimes (default 3; the polling study runs 2).
 */
import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { goAvailable, goBuild, runPeer, socketDir, startPeer, tsCommand } from "../test/interop/support.js";
import { codecBench, codecTable } from "./codec.js";
import { decoderThroughput } from "./decoder.js";
import { inflightRss } from "./inflight.js";
import { buildExecutables, buildPrograms, coldStarts, importCosts, writeRequest } from "./nri/e2e.js";
import { recordedRequest } from "./nri/payload.js";
import { fmt, footprintTables, median, nriTables, operationsTables, pollingTables } from "./nri/report.js";
import { FULL, type Payload, QUICK, runFootprint, runNri, runOperations, runPolling } from "./nri/suite.js";
import { engineEnv, IMAGE_ENGINE_ENV, LOW_FOOTPRINT_OPTIONS } from "../src/ship/footprint.js";
import { translateBench } from "./translate.js";
import { runOnAskedNode } from "./node-line.js";

const ROOT = resolve(import.meta.dirname, "..");
const argv = process.argv.slice(2);
function option(name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith("--")) throw new Error(`bench: --${name} needs a value`);
  return v;
}
const known = new Set(["--node", "--quick", "--only", "--polling", "--operations", "--out", "--json"]);
for (const [i, a] of argv.entries()) {
  if (a.startsWith("--") && !known.has(a)) throw new Error(`bench: unknown option "${a}"`);
  if (!a.startsWith("--") && !["--node", "--only", "--out", "--json"].includes(argv[i - 1] ?? "")) throw new Error(`bench: unexpected argument "${a}"`);
}

// Run on the node binary asked for: the driver re-executes itself there.
runOnAskedNode(argv, import.meta.filename, ROOT);

const quick = argv.includes("--quick");
const only = option("only");
if (only !== undefined && only !== "nri" && only !== "operations" && only !== "footprint") throw new Error(`bench: --only "${only}": "nri", "operations" and "footprint" are known`);
const seconds = quick ? 0.2 : Number(process.env.BENCH_SECONDS ?? "5");
const shapes: [number, number][] = quick
  ? [[1, 100]]
  : [
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

const out: string[] = [];
const say = (line = ""): void => {
  console.log(line);
  out.push(line);
};
const log = (line: string): void => console.error(`bench: ${line}`);

function machine(): string {
  const model = cpus()[0]?.model ?? "unknown CPU";
  const virt = (() => {
    try {
      return execFileSync("systemd-detect-virt", { encoding: "utf8" }).trim();
    } catch {
      return "none detected";
    }
  })();
  const kernel = readFileSync("/proc/sys/kernel/osrelease", "utf8").trim();
  const go = execFileSync("go", ["version"], { encoding: "utf8" }).trim().replace(/^go version /, "");
  return `${cpus().length} × ${model}, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Linux ${kernel} (virtualization: ${virt}); Node ${process.version}; ${go}; ${scheduling()}`;
}

/** How this process (and so every process of the run) is scheduled: `chrt -f 10 npm run bench` keeps other work on a busy machine from the figures. */
function scheduling(): string {
  const sched = readFileSync("/proc/self/sched", "utf8");
  const policy = Number(/^policy\s*:\s*(\d+)/m.exec(sched)?.[1] ?? "0");
  const prio = Number(/^prio\s*:\s*(\d+)/m.exec(sched)?.[1] ?? "120");
  if (policy === 1 || policy === 2) return `scheduled ${policy === 1 ? "SCHED_FIFO" : "SCHED_RR"} priority ${99 - prio} (real time: other processes wait)`;
  return `scheduled normally, nice ${prio - 120}`;
}

async function transportSections(): Promise<void> {
  const go: [string, string[]] = [goBuild("go-peer", "go-peer"), []];
  const ts = tsCommand("test/interop/ts-peer.ts");
  const pairs: [string, [string, string[]], [string, string[]]][] = [
    ["TS → TS", ts, ts],
    ["TS → Go", ts, go],
    ["Go → TS", go, ts],
    ["Go → Go", go, go],
  ];
  say("## Transport, codec and translation");
  say();
  say(`Unary echo over a unix socket, one connection, ${seconds} s per cell; client → server; ratio = rps / Go → Go rps.`);
  say();
  say("| conc | size | " + pairs.map(([n]) => `${n} rps (p50/p99 µs)`).join(" | ") + " | TS → TS ratio |");
  say("|---|---|" + pairs.map(() => "---|").join("") + "---|");
  for (const [conc, size] of shapes) {
    const results: Result[] = [];
    for (const [, client, server] of pairs) results.push(await rpsRun(client, server, conc, size));
    const base = results[3]!.rps;
    const cells = results.map((r) => `${fmt(r.rps)} (${fmt(r.p50_us)}/${fmt(r.p99_us)}) ×${fmt(r.rps / base, 2)}`);
    say(`| ${conc} | ${size} | ${cells.join(" | ")} | **${fmt(results[0]!.rps / base, 2)}** |`);
  }
  say();
  say("Frame decoder (sans-IO, one core), payloads fed in chunks of the given size:");
  say();
  say("| payload | chunk | frames/s | MB/s | frames/s, every `data` view made |");
  say("|---|---|---|---|---|");
  for (const [payload, chunk] of [[64, 64 << 10], [64, 1 << 20], [64 << 10, 64 << 10], [64 << 10, 1 << 20]] as const) {
    const ms = quick ? 50 : 2000;
    const r = decoderThroughput(payload, chunk, ms);
    const v = decoderThroughput(payload, chunk, ms, true);
    say(`| ${payload} B | ${chunk >> 10} KiB | ${fmt(r.framesPerSec)} | ${fmt(r.mbPerSec)} | ${fmt(v.framesPerSec)} |`);
  }
  say();
  const inflight = quick ? 100 : 10_000;
  say(`Peak RSS of a server process holding ${fmt(inflight)} calls in flight (Sleep 3000 ms, one connection):`);
  say();
  say("| server | idle RSS | peak RSS | per call |");
  say("|---|---|---|---|");
  for (const [name, server] of [["nri-wire (TS)", ts], ["Go ttrpc", go]] as const) {
    const r = await inflightRss(server, inflight);
    say(`| ${name} | ${fmt(r.idleKiB / 1024, 1)} MiB | ${fmt(r.peakKiB / 1024, 1)} MiB | ${fmt(((r.peakKiB - r.idleKiB) * 1024) / inflight)} B |`);
  }
  say();
  const t = translateBench(quick ? 50 : 2000);
  say(`Version translation of a ${t.dedicatedBytes}-byte PostCreateContainer (realistic pod and container), ops/s:`);
  say();
  say("| direction | tag rewriting | generated types (decode + build + encode) | ratio |");
  say("|---|---|---|---|");
  for (const [name, r] of [["StateChange → dedicated", t.stateChangeToDedicated], ["dedicated → StateChange", t.dedicatedToStateChange]] as const) {
    say(`| ${name} | ${fmt(r.rewrite)} | ${fmt(r.generated)} | ×${fmt(r.ratio, 0)} |`);
  }
  say();
  for (const line of codecTable(await codecBench())) say(line);
  say();
}

async function nriSections(): Promise<unknown> {
  const programs = buildPrograms();
  const dir = socketDir();
  const recorded = recordedRequest(dir);
  const synthetic = writeRequest(dir);
  const payloads: Payload[] = [
    { name: `recorded (${fmt(recorded.bytes)} B)`, ...recorded },
    { name: `synthetic (${fmt(synthetic.bytes)} B)`, ...synthetic },
  ];
  const counts = { ...(quick ? QUICK : FULL), ...(process.env.BENCH_ROUNDS === undefined ? {} : { rounds: Number(process.env.BENCH_ROUNDS) }) };
  const operations = async (): Promise<unknown> => {
    const o = await runOperations(programs, payloads[0]!, counts, log);
    for (const l of operationsTables(o)) say(l);
    say();
    return o;
  };
  if (only === "footprint") {
    const built = await buildExecutables(dir);
    say("## What a plugin costs a node");
    say();
    say(
      `A runtime and 1 or 3 plugins, each its own process, as in \`npm run bench\`'s NRI regimes, ${payloads[0]!.name} request. \`TS\` plugins are the bench program on Node; ` +
        `\`TS executable\` rows are the same plugin as \`nri-wire build\` makes it (the form a node runs), with its default options, with the low-footprint profile (\`${LOW_FOOTPRINT_OPTIONS.join(" ")}\`) and for Bun (\`--engine bun\`), embedding ${built.engines.default} and ${built.engines.bun}; \`image's environment\` rows are those executables with what their image's config sets (${Object.keys(IMAGE_ENGINE_ENV).map((e) => `${e}: \`${engineEnv(e).join(" ")}\``).join(", ")}), which is how the image's process differs from them besides its launcher reading the bundle and code cache from files. Memory settings: a TypeScript plugin under the Go runtime with ` +
        `node flags or an environment variable of its own (bench/nri/suite.ts MEMORY_SETTINGS). Rows run interleaved, each round starting one row later.`,
    );
    say();
    const f = await runFootprint(programs, built.commands, payloads[0]!, counts, log);
    for (const l of footprintTables(f)) say(l);
    say();
    return { footprint: f };
  }
  if (only === "operations") {
    say("## NRI end to end");
    say();
    return { operations: await operations() };
  }
  say("## NRI end to end");
  say();
  say(
    `A runtime and 1 or 3 plugins, each its own process, running cycles of CreateContainer + StartContainer + PostStartContainer (three events; each plugin adds one annotation and one ` +
      `environment variable on CreateContainer). TS: \`nri-wire/runtime\` and \`nri-wire/plugin\` compiled by tsc, on Node ${process.version}; Go: containerd/nri v0.12.5 ` +
      `\`pkg/adaptation\` and \`pkg/stub\` (test/interop/nri-bench). Requests: the CreateContainerRequest of a containerd v2.4.2 session recorded with \`nri-wire record\` ` +
      `(bench/fixtures/containerd-session.*), and a synthetic one with a realistic pod and container. Rows name the runtime, then the plugins: \`Go + TS\` is a TypeScript plugin under the Go runtime, as under containerd or CRI-O. ` +
      `Rows run interleaved, each round starting one row later.`,
  );
  say();
  const t0 = performance.now();
  const nri = await runNri(programs, payloads, counts, log);
  for (const l of nriTables(nri)) say(l);
  log(`NRI regimes took ${fmt((performance.now() - t0) / 1000)} s`);
  say();
  const runs = quick ? 2 : 9;
  say(`### Cold start`);
  say();
  say(`Plugin process launch until the runtime has it synchronized, median of ${runs} launches (min–max):`);
  say();
  const kinds = ["TS", "Go"] as const;
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
  say();
  const imports = importCosts(programs.pluginEntry, quick ? 2 : 15);
  say(
    `Importing nri-wire/plugin (compiled): a process doing only that takes ${fmt(median(imports.importing), 1)} ms, ` +
      `\`node -e 0\` ${fmt(median(imports.bare), 1)} ms (medians of ${imports.bare.length}, interleaved).`,
  );
  say();
  let polling: unknown;
  if (argv.includes("--polling")) {
    const p = await runPolling(programs, payloads[0]!, quick ? QUICK : { ...FULL, rounds: Math.min(2, counts.rounds) }, log);
    for (const l of pollingTables(p)) say(l);
    say();
    polling = p;
  }
  return { nri, polling, ...(argv.includes("--operations") ? { operations: await operations() } : {}) };
}

async function main(): Promise<void> {
  if (!goAvailable()) throw new Error("bench: the Go reference is needed for the ratios");
  const t0 = performance.now();
  const date = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const load0 = loadavg()[0]!;
  if (only === undefined) await transportSections();
  const raw = await nriSections();
  const total = (performance.now() - t0) / 1000;
  const header = [
    `# Benchmarks on Node ${process.version}`,
    "",
    `Generated by \`npm run bench${quick || only !== undefined ? ` --${quick ? " --quick" : ""}${only === undefined ? "" : ` --only ${only}`}` : ""}\` on ${date}: ${machine()}. Run time ${fmt(total / 60, 1)} min; ` +
      `1-minute load average ${fmt(load0, 2)} at the start, ${fmt(loadavg()[0]!, 2)} at the end.`,
    "",
  ];
  const file = option("out") ?? (quick ? undefined : join(ROOT, `docs/bench/${only === "footprint" ? "footprint-" : ""}node-${process.versions.node.split(".")[0]}.md`));
  if (file !== undefined) {
    mkdirSync(dirname(resolve(file)), { recursive: true });
    writeFileSync(resolve(file), `${[...header, ...out].join("\n")}\n`);
    log(`wrote ${file}`);
  }
  const json = option("json");
  if (json !== undefined) writeFileSync(json, JSON.stringify({ date, node: process.version, total, ...(raw as object) }));
  log(`total ${fmt(total)} s`);
}

await main();
