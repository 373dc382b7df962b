import { existsSync, readFileSync, rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containerd } from "./containerd.js";
import { crio } from "./crio.js";
import { expectedCpuValue, lifecycle, type Observed, removeAllPods } from "./lifecycle.js";
import { PLUGINS, type PluginUnderTest } from "./plugins.js";
import { pluginFiles, type RunningRuntime, type RuntimeUnderTest } from "./runtime.js";
import { type Built, build, processesUnder, readText, logDir, removeWorkDir, skipReason, type Started, startLogged, stop, waitUntil, workDir } from "./support.js";

/**
 * Real runtimes in the loop: containerd v2.4.2 and CRI-O v1.34.0, built by
 * scripts/runtimes/build.sh, run one host-network pod and container through CRI for every
 * plugin the project ships, with the plugin connecting to the NRI socket and pre-installed in
 * the plugin directory (launched by the runtime on fd 3). Runs as root on Linux; elsewhere it
 * prints a notice and skips. `npm run test:runtimes` runs only this suite.
 */

const skip = skipReason();
if (skip !== undefined) console.warn(skip);

const LIFECYCLE_EVENTS = new Set([
  "RunPodSandbox", "UpdatePodSandbox", "PostUpdatePodSandbox", "StopPodSandbox", "RemovePodSandbox",
  "CreateContainer", "PostCreateContainer", "StartContainer", "PostStartContainer", "UpdateContainer",
  "PostUpdateContainer", "StopContainer", "RemoveContainer", "ValidateContainerAdjustment",
]);

interface PluginLine {
  event?: string;
  pod?: string;
  container?: string;
  runtime?: string;
  nriVersion?: string;
}

function pluginLines(file: string): PluginLine[] {
  return readText(file)
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as PluginLine);
}

/** `NRI plugin uses a deprecated interface.` lines of a log, as `<plugin> <Event>`. */
function deprecationWarnings(log: string): string[] {
  const re = /msg="NRI plugin uses a deprecated interface\." deprecated=StateChange details="does not implement a dedicated (\w+) RPC call" plugin=(\S+)/;
  return readText(log)
    .split("\n")
    .flatMap((l) => {
      const m = re.exec(l);
      return m ? [`${m[2]} ${m[1]}`] : [];
    });
}

/** Error-level log lines about NRI or its plugins. */
function nriErrors(log: string): string[] {
  return readText(log)
    .split("\n")
    .filter((l) => /level=error/.test(l) && /nri|plugin/i.test(l));
}

interface Outcome {
  /** Undefined when the runtime refused the plugin as expected. */
  observed?: Observed;
  lines: PluginLine[];
  log: string;
  runtimeDeprecations: string[];
}

/** A runtime, its state and log directories and the number of runs so far. */
interface Suite {
  runtime: RuntimeUnderTest;
  built: Built;
  dir: string;
  logs: string;
  runs: number;
}

/**
 * Starts the runtime (and the plugin), drives the lifecycle, stops everything by PID. When the
 * runtime is known to refuse the plugin, waits for that refusal instead of the lifecycle.
 */
async function runOnce(s: Suite, p: PluginUnderTest, mode: "socket" | "fd"): Promise<Outcome> {
  const n = ++s.runs;
  const files = pluginFiles(s.logs, n);
  const rt: RunningRuntime = await s.runtime.start(s, n, mode === "fd" ? p : undefined);
  let plugin: Started | undefined;
  const tools = { crictl: s.built.CRICTL!, criClient: s.built.CRI_CLIENT!, image: s.built.IMAGE!, endpoint: rt.endpoint, log: rt.log };
  const what = `${p.label} (${mode}) with ${s.runtime.name}`;
  const leaks: string[] = [];
  let failed = true;
  try {
    if (mode === "socket") {
      const [cmd, ...args] = p.argv;
      plugin = startLogged("sh", ["-c", 'out=$1 err=$2; shift 2; exec "$@" >"$out" 2>"$err"', "sh", files.out, files.err, cmd!, ...args, "--socket", rt.nriSocket], "/dev/null", {
        ...process.env,
        NRI_PLUGIN_NAME: p.name,
        NRI_PLUGIN_IDX: p.idx,
      });
    }
    const refusal = s.runtime.refusal(p);
    const detail = () => `; plugin stderr: ${files.err}: ${readText(files.err).slice(-2000)}; runtime log: ${rt.log}`;
    if (refusal !== undefined) {
      await waitUntil(
        () => readText(rt.log).includes(refusal) || pluginLines(files.out).some((l) => l.event === "Synchronize"),
        `${what}: expected the refusal "${refusal}"`,
        60_000,
        detail,
      );
      failed = false;
      return { lines: pluginLines(files.out), log: rt.log, runtimeDeprecations: [] };
    }
    await waitUntil(() => pluginLines(files.out).some((l) => l.event === "Synchronize"), `${what}: the plugin did not synchronize`, 60_000, detail);
    const observed = await lifecycle(tools, s.dir, `${n}`);
    const last = s.runtime.events(p).at(-1);
    await waitUntil(() => pluginLines(files.out).some((l) => l.event === last), `${what}: the plugin never received ${last}`, 30_000, () => `; plugin output: ${files.out}; runtime log: ${rt.log}`);
    const runtimeDeprecations = await rt.deprecations();
    failed = false;
    return { observed, lines: pluginLines(files.out), log: rt.log, runtimeDeprecations };
  } finally {
    if (failed) await removeAllPods(tools, s.dir);
    await rt.stop();
    // The plugin sees its runtime go away (or refuse it) and must exit by itself.
    const pid = plugin?.pid ?? (existsSync(files.pid) ? Number(readFileSync(files.pid, "utf8")) : undefined);
    if (pid !== undefined) {
      const alive = () => existsSync(`/proc/${pid}`) && !readText(`/proc/${pid}/stat`).includes(") Z ");
      await waitUntil(() => !alive(), "", 15_000).catch(() => {
        leaks.push(`plugin ${p.label} (pid ${pid}) still running after ${s.runtime.name} stopped`);
      });
      if (plugin) await stop(plugin);
      else if (alive()) process.kill(pid, "SIGKILL");
    }
    await waitUntil(() => processesUnder(s.dir).length === 0, "", 15_000).catch(() => {
      for (const q of processesUnder(s.dir)) {
        leaks.push(`process ${q.pid} left behind: ${q.cmdline.slice(0, 200)}`);
        process.kill(q.pid, "SIGKILL");
      }
    });
    if (leaks.length > 0 && !failed) throw new Error(`runtimes: ${what} left behind: ${leaks.join("; ")}`);
  }
}

/** The checks every (runtime, plugin, mode) run must pass. */
function check(r: RuntimeUnderTest, p: PluginUnderTest, o: Outcome): void {
  const where = `runtime log: ${o.log}`;
  const configure = o.lines.find((l) => l.event === "Configure");
  expect(configure, where).toMatchObject({ runtime: r.configure.runtime, nriVersion: r.configure.nriVersion });
  if (r.refusal(p) !== undefined) {
    // Refused right after Configure: nothing else reaches the plugin.
    expect(o.lines.map((l) => l.event), where).toEqual(["Configure"]);
    expect(readText(o.log), where).toContain(r.refusal(p));
    return;
  }
  const seen = o.observed;
  if (seen === undefined) throw new Error(`runtimes: no lifecycle observed; ${where}`);
  // Every lifecycle event once, in order, for this pod and container.
  const events = o.lines.filter((l) => l.event !== undefined && LIFECYCLE_EVENTS.has(l.event));
  expect(events.map((l) => l.event), where).toEqual(r.events(p));
  for (const l of events) {
    expect(l.pod, `${l.event}: ${where}`).toBe(seen.podId);
    expect(l.container, `${l.event}: ${where}`).toBe(/PodSandbox$/.test(l.event!) ? "" : seen.containerId);
  }
  // The adjustments, as the container sees them.
  expect(seen.env).toContain(`${p.adjusts.env[0]}=${p.adjusts.env[1]}`);
  expect(seen.annotations[p.adjusts.annotation[0]]).toBe(p.adjusts.annotation[1]);
  expect(seen.cpu.value, seen.cpu.file).toBe(expectedCpuValue(seen.cpu.file, p.adjusts.cpuSharesOnUpdate));
  // Deprecation warnings exactly where the runtime owes them, and no NRI error.
  const id = `${p.idx}-${p.name}`;
  expect(deprecationWarnings(o.log).sort(), where).toEqual(r.deprecationWarnings(p).map((e) => `${id} ${e}`).sort());
  expect(o.runtimeDeprecations.includes("io.containerd.deprecation/nri-plugin-interface"), where).toBe(r.deprecationWarnings(p).length > 0);
  expect(nriErrors(o.log), where).toEqual([]);
}

/** The runtimes, by the name build.sh takes; NRI_WIRE_RUNTIMES=containerd (comma-separated) picks some. */
const RUNTIMES: readonly { name: string; make: (b: Built) => RuntimeUnderTest }[] = [
  { name: "containerd", make: containerd },
  { name: "crio", make: crio },
].filter((r) => (process.env.NRI_WIRE_RUNTIMES ?? r.name).split(",").includes(r.name));

describe.skipIf(skip !== undefined).each(RUNTIMES)("$name", ({ name, make }) => {
  // Filled by the build in beforeAll; the runtime reads it only when it starts.
  const built: Built = {};
  const runtime = make(built);
  const suite = { runtime, built } as Suite;
  const createdHostPaths: string[] = [];
  beforeAll(async () => {
    createdHostPaths.push(...runtime.hostPaths.filter((h) => !existsSync(h)));
    Object.assign(built, await build([name]));
    suite.dir = workDir(name === "containerd" ? "ctd" : "crio");
    suite.logs = logDir(built, name);
    suite.runs = 0;
  }, 1_800_000);
  afterAll(async () => {
    if (suite.dir === undefined) return;
    const leaks = await removeWorkDir(suite.dir);
    for (const h of createdHostPaths) rmSync(h, { recursive: true, force: true });
    if (leaks.length > 0) throw new Error(`runtimes: ${name} left behind: ${leaks.join("; ")}`);
  }, 120_000);

  const cases = PLUGINS.flatMap((p) =>
    (["socket", "fd"] as const).map((mode) => {
      const refusal = runtime.refusal(p);
      const expect = refusal === undefined ? "every event once and in order, adjustments in the container, exact deprecations, no NRI error" : `refused, as ${runtime.name} does today: "${refusal}"`;
      return { p, mode, title: `${p.label}, ${mode}: ${expect}` };
    }),
  );
  it.each(cases)("$title", async ({ p, mode }) => {
    check(runtime, p, await runOnce(suite, p, mode));
  }, 300_000);
});
