/**
 * End to end: the bench programs (the TypeScript runtime and plugin and their Go twins on
 * containerd/nri v0.12.5), the synthetic request, and the cold start of a plugin process: launch
 * until the runtime reports it synchronized. The cycles themselves run in session.ts.
 *
 * TypeScript processes run the compiled JavaScript (tsc output, the package as users import it),
 * not tsx; `buildExecutables` makes the bench plugin as `nri-wire build` does, the form a node runs.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { CreateContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { type BuildOptions, buildPlugin } from "../../src/ship/build.js";
import { LOW_FOOTPRINT_OPTIONS } from "../../src/ship/footprint.js";
import { BIN_DIR, type Peer, goBuild, socketDir, startPeer } from "../../test/interop/support.js";
import { realisticContainer, realisticPod } from "../translate.js";
import type { Command, Programs } from "./session.js";
import type { ExecutableKind } from "./suite.js";

const ROOT = resolve(import.meta.dirname, "../..");


/** Builds the Go bench peer and compiles the TypeScript bench programs with tsc. */
export function buildPrograms(): Programs {
  const go = goBuild("nri-bench", "nri-bench");
  const out = join(BIN_DIR, "bench-js");
  execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", join(ROOT, "bench/nri/tsconfig.json"), "--outDir", out], {
    stdio: "inherit",
  });
  return {
    runtime: { TS: [process.execPath, [join(out, "bench/nri/runtime.js")]], Go: [go, ["runtime"]] },
    plugin: { TS: [process.execPath, [join(out, "bench/nri/plugin.js")]], Go: [go, ["plugin"]] },
    pluginEntry: join(out, "src/plugin/index.js"),
  };
}

/**
 * The bench plugin (plugin-entry.ts) built by `nri-wire build` (a single executable on this Node,
 * or line 26's from the registry), with its default options, with the low-footprint profile and
 * for Bun (the newest 1.4 or later from the registry), each installed into a directory of its own
 * under `dir` as a user would; their commands, and the engine each embeds (`node v26.12.1`,
 * `bun 1.4.5`).
 */
export async function buildExecutables(dir: string): Promise<{ commands: Record<ExecutableKind, Command>; engines: Record<ExecutableKind, string> }> {
  const engines = {} as Record<ExecutableKind, string>;
  const one = async (kind: ExecutableKind, options: Partial<BuildOptions>): Promise<Command> => {
    const r = await buildPlugin({ entry: join(ROOT, "bench/nri/plugin-entry.ts"), name: "bench", idx: "10", out: join(dir, `build-${kind}`), tag: "1.0.0", ...options });
    const installed = join(dir, `installed-${kind}`);
    mkdirSync(installed, { recursive: true });
    copyFileSync(r.executables[0]!.path, join(installed, "10-bench"));
    chmodSync(join(installed, "10-bench"), 0o755);
    engines[kind] = `${r.engines[0]!.name} ${r.engines[0]!.version}`;
    return [join(installed, "10-bench"), []];
  };
  const commands = { default: await one("default", {}), "low-footprint": await one("low-footprint", { nodeOptions: LOW_FOOTPRINT_OPTIONS }), bun: await one("bun", { engine: "bun" }) };
  return { commands, engines };
}

/** The synthetic request (a realistic pod and container), written where both runtimes read it. */
export function writeRequest(dir: string): { path: string; bytes: number } {
  const raw = toBinary(CreateContainerRequestSchema, create(CreateContainerRequestSchema, { pod: realisticPod(), container: realisticContainer() }));
  const path = join(dir, "create-container-synthetic.bin");
  writeFileSync(path, raw);
  return { path, bytes: raw.length };
}

function startPlugin(cmd: Command, socket: string, i: number): Peer {
  return startPeer(cmd, ["--socket", socket, "--idx", String(10 + i), "--name", `bench-${i}`]);
}

async function stop(peers: Peer[]): Promise<void> {
  for (const p of peers) p.child.kill("SIGKILL");
  await Promise.all(peers.map((p) => p.exited));
}

/** Launch → synchronized of `runs` plugin processes, one at a time; returns each in ms. */
export async function coldStarts(rt: Command, pl: Command, runs: number): Promise<number[]> {
  const socket = join(socketDir(), "nri.sock");
  const runtime = startPeer(rt, ["--serve", "--socket", socket]);
  const times: number[] = [];
  try {
    await runtime.waitFor((l) => l === "ready");
    for (let i = 0; i < runs; i++) {
      const synced = (): number => runtime.lines.filter((l) => l === "synced").length;
      const want = synced() + 1;
      const t0 = performance.now();
      const plugin = startPlugin(pl, socket, 0);
      await runtime.waitFor((l) => l === "synced" && synced() >= want);
      times.push(performance.now() - t0);
      await stop([plugin]);
    }
  } finally {
    await stop([runtime]);
  }
  return times;
}

/**
 * What importing a module costs a fresh process: `runs` launches of `node -e 0` and of node
 * importing `entry`, interleaved so that both see the same machine; each launch's wall time in ms.
 */
export function importCosts(entry: string, runs: number): { bare: number[]; importing: number[] } {
  const bare: number[] = [];
  const importing: number[] = [];
  const time = (args: string[]): number => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: "ignore" });
    if (r.status !== 0) throw new Error(`bench: node ${args.join(" ")} exited ${r.status}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < runs; i++) {
    bare.push(time(["-e", "0"]));
    importing.push(time(["--input-type=module", "-e", `await import(${JSON.stringify(entry)})`]));
  }
  return { bare, importing };
}

/** The median of some numbers. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The index of a median element of `xs` (the lower middle one for an even count). */
export function medianIndex(xs: readonly number[]): number {
  const order = xs.map((_, i) => i).sort((a, b) => xs[a]! - xs[b]!);
  return order[(xs.length - 1) >> 1]!;
}
