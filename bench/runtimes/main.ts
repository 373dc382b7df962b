/**
 * `npm run bench:runtimes`: what a pod pays for NRI plugins in a real runtime. containerd v2.4.2
 * (CRI and NRI, as test/runtimes runs it) creates and starts containers one at a time in one
 * host-network pod, timed by a Go CRI client (test/runtimes/cri-client bench), with no plugin,
 * with 1 and 3 Go plugins (containerd/nri v0.12.5 pkg/stub) and with 1 and 3 TypeScript plugins
 * (`nri-wire/plugin`, compiled), the bench plugins that add one annotation and one environment
 * variable on CreateContainer. Configurations run interleaved in rounds (each round starting one
 * later), the plugins started fresh each round; the first containers of a round are left out.
 * Writes docs/bench/containerd-node-<major>.md (or --out FILE).
 *
 *   npm run bench:runtimes -- [--node PATH] [--quick] [--out FILE]
 *
 * Root on Linux, with Go.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { runForExit } from "../../test/runtimes/support.js";
import { buildPrograms } from "../nri/e2e.js";
import { fmt, quantile } from "../nri/report.js";
import type { Impl } from "../nri/session.js";
import { upContainerd } from "./containerd-up.js";

const ROOT = resolve(import.meta.dirname, "../..");
const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : argv[i + 1];
};
const node = option("node");
if (node !== undefined && resolve(node) !== process.execPath) {
  const rest = argv.filter((a, i) => a !== "--node" && argv[i - 1] !== "--node");
  const r = spawnSync(resolve(node), ["--import", "tsx", import.meta.filename, ...rest], { stdio: "inherit", cwd: ROOT });
  process.exit(r.status ?? 1);
}
const quick = argv.includes("--quick");
const ROUNDS = quick ? 1 : 4;
const PER_ROUND = quick ? 3 : 50;
/** Containers at the start of each round left out of the figures. */
const LEFT_OUT = quick ? 1 : 3;

interface Config {
  label: string;
  impl?: Impl;
  plugins: number;
}
const CONFIGS: readonly Config[] = [
  { label: "no plugin", plugins: 0 },
  { label: "1 Go plugin", impl: "Go", plugins: 1 },
  { label: "1 TS plugin", impl: "TS", plugins: 1 },
  { label: "3 Go plugins", impl: "Go", plugins: 3 },
  { label: "3 TS plugins", impl: "TS", plugins: 3 },
];

interface Figures {
  create_us: number[];
  start_us: number[];
  plugin_annotations: number;
}

const log = (s: string): void => console.error(`bench: ${s}`);
const t0 = performance.now();
const date = new Date().toISOString().replace(/\.\d+Z$/, "Z");
const programs = buildPrograms();
const c = await upContainerd();
const results: Record<string, { create: number[]; start: number[] }> = Object.fromEntries(CONFIGS.map((k) => [k.label, { create: [], start: [] }]));
const SYNCED = "connected and synchronized";
const CLOSED = "connection to plugin";
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < CONFIGS.length; k++) {
      const cfg = CONFIGS[(k + round) % CONFIGS.length]!;
      const synced = c.logCount(SYNCED);
      const closed = c.logCount(CLOSED);
      const plugins = Array.from({ length: cfg.plugins }, (_, i) => {
        const [cmd, args] = programs.plugin[cfg.impl!];
        return spawn(cmd, [...args, "--socket", c.rt.nriSocket, "--idx", String(10 + i), "--name", `bench-${i}`], { stdio: "ignore" });
      });
      try {
        await c.waitLog(SYNCED, synced + cfg.plugins, `${cfg.label}: the plugins did not synchronize`);
        const r = await runForExit(
          c.built.CRI_CLIENT!,
          ["--endpoint", c.rt.endpoint, "bench", "--image", c.built.IMAGE!, "--count", String(PER_ROUND + LEFT_OUT), "--name", `b${round}-${k}`, "--logs", join(c.dir, "pod-logs")],
          600_000,
        );
        if (r.code !== 0) throw new Error(`bench: cri-client bench exited ${r.code}: ${r.stderr.trim()}; log: ${c.rt.log}`);
        const f = JSON.parse(r.stdout.trim()) as Figures;
        if (f.plugin_annotations !== cfg.plugins) throw new Error(`bench: ${cfg.label}: ${f.plugin_annotations} plugin annotations in the container's spec`);
        results[cfg.label]!.create.push(...f.create_us.slice(LEFT_OUT));
        results[cfg.label]!.start.push(...f.start_us.slice(LEFT_OUT));
        log(`round ${round + 1}: ${cfg.label}: create p50 ${fmt(quantile(f.create_us, 0.5) / 1000, 1)} ms`);
      } finally {
        for (const p of plugins) p.kill("SIGKILL");
        await c.waitLog(CLOSED, closed + cfg.plugins, `${cfg.label}: containerd did not see the plugins go`);
      }
    }
  }
} finally {
  await c.down();
}

const out: string[] = [];
const say = (l = ""): void => void out.push(l);
const ms = (us: number): string => fmt(us / 1000, 2);
const base = results["no plugin"]!;
const signed = (us: number): string => `${us >= 0 ? "+" : "−"}${ms(Math.abs(us))}`;
const total = (x: { create: number[]; start: number[] }): number[] => x.create.map((v, i) => v + x.start[i]!);
say(`# containerd v2.4.2 with NRI plugins, Node ${process.version}`);
say();
say(
  `Generated by \`npm run bench:runtimes${quick ? " -- --quick" : ""}\` on ${date} (run time ${fmt((performance.now() - t0) / 60_000, 1)} min). ` +
    `CreateContainer and StartContainer through CRI, one container at a time in one host-network pod, each stopped and removed before the next; ` +
    `${ROUNDS} interleaved round${ROUNDS > 1 ? "s" : ""} of ${PER_ROUND} measured containers per configuration (the first ${LEFT_OUT} of each round left out), plugins started fresh each round. ` +
    `Plugins: the bench plugins (one annotation and one environment variable on CreateContainer), Go on containerd/nri v0.12.5 pkg/stub, TypeScript compiled by tsc on Node ${process.version}. Times in ms; n = containers.`,
);
say();
say("| configuration | n | create p50 / p99 | start p50 / p99 | create + start p50 / p99 | create + start p50 over no plugin |");
say("|---|---|---|---|---|---|");
for (const cfg of CONFIGS) {
  const r = results[cfg.label]!;
  const t = total(r);
  say(
    `| ${cfg.label} | ${r.create.length} | ${ms(quantile(r.create, 0.5))} / ${ms(quantile(r.create, 0.99))} | ${ms(quantile(r.start, 0.5))} / ${ms(quantile(r.start, 0.99))} | ` +
      `${ms(quantile(t, 0.5))} / ${ms(quantile(t, 0.99))} | ${cfg.plugins === 0 ? "–" : signed(quantile(t, 0.5) - quantile(total(base), 0.5))} |`,
  );
}
for (const l of out) console.log(l);
const file = option("out") ?? (quick ? undefined : join(ROOT, `docs/bench/containerd-node-${process.versions.node.split(".")[0]}.md`));
if (file !== undefined) {
  mkdirSync(dirname(resolve(file)), { recursive: true });
  writeFileSync(resolve(file), `${out.join("\n")}\n`);
  log(`wrote ${file}`);
}
