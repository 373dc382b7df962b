/**
 * `npm run bench:ship`: the forms of a plugin executable `nri-wire build` makes, and a startup
 * snapshot single executable it does not (to keep that choice measured), with the Go plugin in
 * the same run: size, cold start (process launch until the Go runtime has it
 * synchronized; median, min–max of BENCH_LAUNCHES launches, default 15), events/s and peak RSS
 * (VmHWM) over BENCH_SECONDS (default 5) of CreateContainer + StartContainer + PostStartContainer
 * cycles, median of BENCH_ROUNDS (default 3) rounds; launches (in blocks of three) and rounds
 * run form after form, interleaved. The Node they embed or name comes from
 * `scripts/runtimes/build.sh node` (Node 26). Each executable is copied into a directory of its
 * own before it runs, as an install does.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { goBuild, socketDir } from "../test/interop/support.js";
import { coldStarts, median, writeRequest } from "./nri/e2e.js";
import { type Programs, runSession } from "./nri/session.js";
import { buildPlugin } from "../src/ship/build.js";
import type { SeaStartup } from "../src/ship/executable.js";
import { LOW_FOOTPRINT_OPTIONS } from "../src/ship/footprint.js";

const ROOT = resolve(import.meta.dirname, "..");
const launches = Number(process.env.BENCH_LAUNCHES ?? "15");
const seconds = Number(process.env.BENCH_SECONDS ?? "5");
const rounds = Number(process.env.BENCH_ROUNDS ?? "3");
const MiB = 1024 * 1024;

type Command = [string, string[]];

interface Row {
  label: string;
  needsNode: boolean;
  bytes: number;
  cmd: Command;
}

function nodeFromCache(): string {
  const out = execFileSync("bash", [join(ROOT, "scripts/runtimes/build.sh"), "node"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const line = out.split("\n").find((l) => l.startsWith("NODE="));
  if (line === undefined) throw new Error("bench: scripts/runtimes/build.sh node printed no NODE=");
  return line.slice("NODE=".length);
}

async function main(): Promise<void> {
  const node = nodeFromCache();
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  const work = mkdtempSync(join(tmpdir(), "nriw-bench-ship-"));
  try {
    const entry = join(ROOT, "bench/nri/plugin-entry.ts");
    const rows: Row[] = [];
    const forms: { label: string; form: "sea" | "script"; nodeOptions: readonly string[]; seaStartup?: SeaStartup }[] = [
      { label: "sea", form: "sea", nodeOptions: [] },
      { label: "sea, startup snapshot instead of the code cache", form: "sea", nodeOptions: [], seaStartup: "snapshot" },
      { label: `sea, low-footprint (${LOW_FOOTPRINT_OPTIONS.join(" ")})`, form: "sea", nodeOptions: LOW_FOOTPRINT_OPTIONS },
      { label: "script (#!node)", form: "script", nodeOptions: [] },
    ];
    for (const [i, f] of forms.entries()) {
      const out = join(work, `out-${i}`);
      const r = await buildPlugin({ entry, name: "bench", idx: "10", out, form: f.form, node, nodeOptions: f.nodeOptions, seaStartup: f.seaStartup });
      // Installed as a user would: copied into a directory of its own.
      const installed = join(work, `installed-${i}`);
      mkdirSync(installed);
      copyFileSync(r.executables[0]!.path, join(installed, "10-bench"));
      chmodSync(join(installed, "10-bench"), 0o755);
      rows.push({ label: f.label, needsNode: f.form === "script", bytes: r.executables[0]!.bytes + (f.form === "script" ? statSync(node).size : 0), cmd: [join(installed, "10-bench"), []] });
    }
    const go = goBuild("nri-bench", "nri-bench");
    rows.unshift({ label: "Go plugin (containerd/nri v0.12.5 stub)", needsNode: false, bytes: statSync(go).size, cmd: [go, ["plugin"]] });
    const runtime: Command = [go, ["runtime"]];
    const request = writeRequest(socketDir()).path;

    const say = (s: string): void => console.log(s);
    say(`Plugin executables, Node ${version}, Go runtime; ${launches} launches, ${rounds} rounds of ${seconds} s:`);
    say("");
    say("| form | Node on the host | size | cold start, median (min–max) | events/s | peak RSS |");
    say("|---|---|---|---|---|---|");
    // Interleaved, so that every form sees the same machine: launches in blocks of three, form
    // after form; then the rounds of events, form after form.
    const starts: number[][] = rows.map(() => []);
    for (let done = 0; done < launches; done += 3) {
      for (const [i, row] of rows.entries()) starts[i]!.push(...(await coldStarts(runtime, row.cmd, Math.min(3, launches - done))));
    }
    const figures: Awaited<ReturnType<typeof runSession>>[][] = rows.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (const [i, row] of rows.entries()) {
        // The plugin under test is run as given (as the Go one is: no TypeScript flags).
        const programs: Programs = { runtime: { Go: runtime, TS: runtime }, plugin: { Go: row.cmd, TS: row.cmd }, pluginEntry: "" };
        figures[i]!.push(await runSession(programs, { runtime: "Go", plugin: "Go", plugins: 1, request, phases: `steady:${seconds}` }));
      }
    }
    for (const [i, row] of rows.entries()) {
      const t = starts[i]!;
      const rate = median(figures[i]!.map((f) => f.phases[0]!.events_per_sec));
      const rss = Math.max(...figures[i]!.flatMap((f) => f.memory.plugins.map((p) => p.hwm))) / 1024;
      say(
        `| ${row.label} | ${row.needsNode ? "needed" : "no"} | ${(row.bytes / MiB).toFixed(1)} MiB${row.needsNode ? " (with node)" : ""} | ` +
          `${median(t).toFixed(1)} ms (${Math.min(...t).toFixed(1)}–${Math.max(...t).toFixed(1)}) | ${rate.toFixed(0)} | ${rss.toFixed(1)} MiB |`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
