/**
 * `npm run bench:ship`: the forms of a plugin `nri-wire build` makes, and a startup snapshot
 * single executable it does not (to keep that choice measured), with the Go plugin in the same
 * run:
 *
 * - size, cold start (process launch until the Go runtime has it synchronized; median, min–max
 *   of BENCH_LAUNCHES launches, default 15), idle and peak anonymous memory (RssAnon: registered
 *   and quiet; highest sample), events/s and peak RSS (VmHWM) over BENCH_SECONDS (default 5) of
 *   CreateContainer + StartContainer + PostStartContainer cycles, median of BENCH_ROUNDS
 *   (default 3) rounds (memory: the highest); launches (in blocks of three) and rounds run form
 *   after form, interleaved. The image forms run the image's own files (its layers unpacked: the
 *   engine, the launcher, the bundle and its code cache or bytecode) as a runtime would. The Bun
 *   forms (`--engine bun`) take the newest Bun 1.4 or later from the npm registry.
 * - the image: its layers, and what a node that has one plugin pulls for a second;
 * - three plugins at once, as a node runs them: from one engine layer (the same Node file
 *   mapped three times) against three single executables (three files), their PSS summed after
 *   a round of events.
 * - when it ran and how busy the machine was: the 1-minute load average as the launches began
 *   and at the end.
 *
 * The Node they embed or name comes from `scripts/runtimes/build.sh node` (Node 26). Each
 * executable is copied into a directory of its own before it runs, as an install does.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { goBuild, socketDir } from "../test/interop/support.js";
import { readImage, unpackLayers } from "../test/support/ship-build.js";
import { coldStarts, median, writeRequest } from "./nri/e2e.js";
import { type Programs, runSession } from "./nri/session.js";
import { buildPlugin, type BuildResult } from "../src/ship/build.js";
import type { SeaStartup } from "../src/ship/executable.js";
import { LOW_FOOTPRINT_OPTIONS } from "../src/ship/footprint.js";

const ROOT = resolve(import.meta.dirname, "..");
const launches = Number(process.env.BENCH_LAUNCHES ?? "15");
const seconds = Number(process.env.BENCH_SECONDS ?? "5");
const rounds = Number(process.env.BENCH_ROUNDS ?? "3");
const MiB = 1024 * 1024;
const mib = (n: number): string => `${(n / MiB).toFixed(1)} MiB`;

type Command = [string, string[]];

interface Row {
  label: string;
  /** The engine it needs on the host, if any. */
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

/**
 * A built image as a node pulls it: its blobs (digest → size: the image index, its first
 * manifest, that manifest's config and layers), the environment its config sets, and those layers
 * unpacked into `rootfs` if given.
 */
function pullImage(r: BuildResult, work: string, rootfs?: string): { blobs: Map<string, number>; env: string[]; entrypoint: string[] } {
  const layout = mkdtempSync(join(work, "image-"));
  try {
    const image = readImage(r.image, layout);
    if (rootfs !== undefined) unpackLayers(image, rootfs);
    const blobs = new Map([image.indexDescriptor, image.index.manifests[0]!, image.manifest.config, ...image.manifest.layers].map((d) => [d.digest, d.size]));
    return { blobs, env: image.config.config.Env, entrypoint: image.config.config.Entrypoint };
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}

/**
 * Runs an unpacked image's entrypoint with the environment the image's config sets, as a runtime
 * does (its PATH included: the engine is run by its path, so it finds nothing else). The paths it
 * names are the unpacked copy's; an entrypoint that is the launcher alone (whose `#!` names the
 * engine's path in the image) is run by the copy's engine.
 */
function imageCommand(rootfs: string, engine: string, config: { env: readonly string[]; entrypoint: readonly string[] }): Command {
  const enginePath = `/usr/local/bin/${engine}`;
  const argv = (config.entrypoint[0] === enginePath ? config.entrypoint : [enginePath, ...config.entrypoint]).map((a) => (a.startsWith("/") ? join(rootfs, a) : a));
  return ["/usr/bin/env", [...config.env, ...argv]];
}

/** A row's note of what an image's config sets for its engine: its environment but the PATH. */
const engineSettings = (env: readonly string[]): string => env.filter((e) => !e.startsWith("PATH=")).join(" ");

async function main(): Promise<void> {
  const node = nodeFromCache();
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  const work = mkdtempSync(join(tmpdir(), "nriw-bench-ship-"));
  const say = (s: string): void => console.log(s);
  try {
    const entry = join(ROOT, "bench/nri/plugin-entry.ts");
    const rows: Row[] = [];
    const forms: { label: string; form: "sea" | "script"; nodeOptions: readonly string[]; seaStartup?: SeaStartup }[] = [
      { label: "sea", form: "sea", nodeOptions: [] },
      { label: "sea, startup snapshot instead of the code cache", form: "sea", nodeOptions: [], seaStartup: "snapshot" },
      { label: `sea, low-footprint (${LOW_FOOTPRINT_OPTIONS.join(" ")})`, form: "sea", nodeOptions: LOW_FOOTPRINT_OPTIONS },
      { label: "script (#!node)", form: "script", nodeOptions: [] },
    ];
    let first: BuildResult | undefined;
    for (const [i, f] of forms.entries()) {
      const out = join(work, `out-${i}`);
      const r = await buildPlugin({ entry, name: "bench", idx: "10", out, form: f.form, node, nodeOptions: f.nodeOptions, seaStartup: f.seaStartup, tag: "1.0.0" });
      first ??= r;
      // Installed as a user would: copied into a directory of its own.
      const installed = join(work, `installed-${i}`);
      mkdirSync(installed);
      copyFileSync(r.executables[0]!.path, join(installed, "10-bench"));
      chmodSync(join(installed, "10-bench"), 0o755);
      rows.push({ label: f.label, needsNode: f.form === "script", bytes: r.executables[0]!.bytes + (f.form === "script" ? statSync(node).size : 0), cmd: [join(installed, "10-bench"), []] });
    }
    const seaRow = rows[0]!;
    // The image form: the first build's image, its layers unpacked as a runtime does.
    const rootfs = join(work, "rootfs");
    const firstImage = pullImage(first!, work, rootfs);
    const { blobs, env } = firstImage;
    const imageRow: Row = { label: `image (engine layer's node, launcher, code cache; ${engineSettings(env)})`, needsNode: false, bytes: first!.manifests[0]!.layers.reduce((n, l) => n + l.unpackedBytes, 0), cmd: imageCommand(rootfs, "node", firstImage) };
    rows.push(imageRow);
    // Bun: the compiled executable, installed by copying, and the image's files.
    const bun = await buildPlugin({ entry, name: "bench", idx: "10", out: join(work, "out-bun"), engine: "bun", tag: "1.0.0" });
    const bunVersion = bun.engines[0]!.version;
    mkdirSync(join(work, "installed-bun"));
    copyFileSync(bun.executables[0]!.path, join(work, "installed-bun/10-bench"));
    chmodSync(join(work, "installed-bun/10-bench"), 0o755);
    rows.push({ label: `bun ${bunVersion} executable (--engine bun)`, needsNode: false, bytes: bun.executables[0]!.bytes, cmd: [join(work, "installed-bun/10-bench"), []] });
    const bunRoot = join(work, "rootfs-bun");
    const bunImage = pullImage(bun, work, bunRoot);
    rows.push({ label: `bun ${bunVersion} image (engine layer's bun, launcher, bytecode; ${engineSettings(bunImage.env)})`, needsNode: false, bytes: bun.manifests[0]!.layers.reduce((n, l) => n + l.unpackedBytes, 0), cmd: imageCommand(bunRoot, "bun", bunImage) });
    const go = goBuild("nri-bench", "nri-bench");
    rows.unshift({ label: "Go plugin (containerd/nri v0.12.5 stub)", needsNode: false, bytes: statSync(go).size, cmd: [go, ["plugin"]] });
    const runtime: Command = [go, ["runtime"]];
    const request = writeRequest(socketDir()).path;

    const load0 = loadavg()[0]!;
    say(`Plugin forms, Node ${version}, Go runtime; ${launches} launches, ${rounds} rounds of ${seconds} s; ${new Date().toISOString().slice(0, 16)}Z:`);
    say("");
    say("| form | Node on the host | size | cold start, median (min–max) | idle anonymous | peak anonymous | events/s | peak RSS |");
    say("|---|---|---|---|---|---|---|---|");
    // Interleaved, so that every form sees the same machine: launches in blocks of three, form
    // after form; then the rounds of events, form after form.
    const starts: number[][] = rows.map(() => []);
    for (let done = 0; done < launches; done += 3) {
      for (const [i, row] of rows.entries()) starts[i]!.push(...(await coldStarts(runtime, row.cmd, Math.min(3, launches - done))));
    }
    const figures: Awaited<ReturnType<typeof runSession>>[][] = rows.map(() => []);
    const session = (cmd: Command, plugins: number) => {
      // The plugin under test is run as given (as the Go one is: no TypeScript flags).
      const programs: Programs = { runtime: { Go: runtime, TS: runtime }, plugin: { Go: cmd, TS: cmd }, pluginEntry: "" };
      return runSession(programs, { runtime: "Go", plugin: "Go", plugins, request, phases: `steady:${seconds}` });
    };
    for (let r = 0; r < rounds; r++) {
      for (const [i, row] of rows.entries()) figures[i]!.push(await session(row.cmd, 1));
    }
    for (const [i, row] of rows.entries()) {
      const t = starts[i]!;
      const rate = median(figures[i]!.map((f) => f.phases[0]!.events_per_sec));
      const highest = (k: "hwm" | "anonIdle" | "anonPeak") => Math.max(...figures[i]!.flatMap((f) => f.memory.plugins.map((p) => p[k]))) / 1024;
      say(
        `| ${row.label} | ${row.needsNode ? "needed" : "no"} | ${mib(row.bytes)}${row.needsNode ? " (with node)" : ""} | ` +
          `${median(t).toFixed(1)} ms (${Math.min(...t).toFixed(1)}–${Math.max(...t).toFixed(1)}) | ${highest("anonIdle").toFixed(1)} MiB | ${highest("anonPeak").toFixed(1)} MiB | ${rate.toFixed(0)} | ${highest("hwm").toFixed(1)} MiB |`,
      );
    }

    // The image's layers, and a second plugin's pull: the blobs it has that the first lacks.
    const second = await buildPlugin({ entry: join(ROOT, "examples/env-injector.ts"), name: "env-injector", idx: "50", out: join(work, "out-second"), node, tag: "1.0.0" });
    const secondBlobs = pullImage(second, work).blobs;
    const pulled = [...secondBlobs].filter(([d]) => !blobs.has(d)).reduce((n, [, size]) => n + size, 0);
    say("");
    say(`The image (${first!.engines[0]!.version}, ${first!.manifests.length} platform): archive ${mib(first!.imageBytes)}; layers compressed / unpacked:`);
    say("");
    say("| layer | compressed | unpacked |");
    say("|---|---|---|");
    for (const [i, l] of first!.manifests[0]!.layers.entries()) say(`| ${["base", "engine", "plugin"][i]} | ${(l.bytes / 1024).toFixed(1)} KiB | ${(l.unpackedBytes / 1024).toFixed(1)} KiB |`);
    say("");
    say(`A second plugin (examples/env-injector.ts) on a node that has the first: ${(pulled / 1024).toFixed(1)} KiB to pull (its plugin layer, config, manifest and index), against ${mib(second.imageBytes)} for its whole archive. Engine stripped: ${mib(first!.engines[0]!.bytes.original)} → ${mib(first!.engines[0]!.bytes.stripped)}.`);

    // Three plugins at once: one engine file mapped three times, against three executables.
    const three = join(work, "three");
    mkdirSync(three);
    for (let i = 0; i < 3; i++) copyFileSync(seaRow.cmd[0], join(three, `bench-${i}`));
    for (let i = 0; i < 3; i++) chmodSync(join(three, `bench-${i}`), 0o755);
    // The session names its plugins bench-0..2: each runs its own copy.
    const picker = join(three, "pick");
    writeFileSync(picker, `#!/bin/sh\nfor a; do name=$a; done\nexec "$(dirname "$0")/$name" "$@"\n`);
    chmodSync(picker, 0o755);
    const pss = { layered: [] as number[], sea: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      const sum = (s: Awaited<ReturnType<typeof runSession>>) => s.memory.plugins.reduce((n, p) => n + p.pss, 0) / 1024;
      pss.layered.push(sum(await session(imageRow.cmd, 3)));
      pss.sea.push(sum(await session([picker, []], 3)));
    }
    say("");
    say(`Three plugins at once, PSS summed after ${seconds} s of events (median of ${rounds} rounds): from one engine layer ${median(pss.layered).toFixed(1)} MiB; three single executables ${median(pss.sea).toFixed(1)} MiB.`);
    say("");
    say(`1-minute load average ${load0.toFixed(2)} when the forms' launches began, ${loadavg()[0]!.toFixed(2)} at the end.`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
