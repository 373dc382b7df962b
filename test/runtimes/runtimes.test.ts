import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../../src/capture/session-decoder.js";
import type { ConformanceReport } from "../../src/testing/index.js";
import { prerequisites } from "../support/prerequisites.js";
import { containerd } from "./containerd.js";
import { crio } from "./crio.js";
import { expectedCpuValue, LIFECYCLE_EVENTS, lifecycle, type Observed, removeAllPods } from "./lifecycle.js";
import { PLUGINS, type PluginUnderTest } from "./plugins.js";
import { NRI_TIMEOUTS, pluginFiles, type RunningRuntime, type RuntimeUnderTest } from "./runtime.js";
import { type Built, build, NRI_WIRE, processesUnder, readText, logDir, removeWorkDir, runForExit, RUNTIME_NEEDS, signal, type Started, startLogged, stop, waitUntil, workDir } from "./support.js";

/**
 * Real runtimes in the loop: containerd v2.4.2 and CRI-O v1.34.0, built by
 * scripts/runtimes/build.sh, run one host-network pod and container through CRI for every
 * plugin the project ships, with the plugin connecting to the NRI socket and pre-installed in
 * the plugin directory (launched by the runtime on fd 3), and once more connecting through
 * `nri-wire record`, whose capture `nri-wire decode` reads back; then `nri-wire test-plugin`, in
 * the dialect of the runtime's NRI era, must judge each plugin as the runtime did. Runs as root on
 * Linux with Go; elsewhere it prints a notice and skips (under CI=true it fails). `npm run
 * test:runtimes` runs it with ship.test.ts.
 */

const gate = prerequisites("runtimes", "the real-runtime suite (containerd and CRI-O)", RUNTIME_NEEDS);

const LIFECYCLE = new Set(LIFECYCLE_EVENTS);

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

/** The StateChange deprecation warnings of a log, as `<plugin>: <message> <details>` (test-plugin records the same words). */
function loggedDeprecations(log: string): string[] {
  const re = /msg="([^"]*)" deprecated=StateChange details="([^"]*)" plugin=(\S+)/;
  return readText(log)
    .split("\n")
    .flatMap((l) => {
      const m = re.exec(l);
      return m ? [`${m[3]}: ${m[1]} ${m[2]}`] : [];
    });
}

/** Error-level log lines about NRI or its plugins. */
function nriErrors(log: string): string[] {
  // The runtime's private directory (/tmp/nriw-…/) is in every socket path it logs: an error
  // about its own ttrpc socket (a shim going away) is not about NRI; one naming nri.sock is.
  return readText(log)
    .split("\n")
    .filter((l) => /level=error/.test(l) && /nri|plugin/i.test(l.replace(/\/tmp\/nriw-[^/\s"']*\//g, "")));
}

interface Outcome {
  /** Undefined when the runtime refused the plugin as expected. */
  observed?: Observed;
  lines: PluginLine[];
  log: string;
  runtimeDeprecations: string[];
  /** The capture's index file, when the plugin connected through `nri-wire record`. */
  capture?: string;
}

/**
 * How the plugin meets the runtime: connecting to its NRI socket, launched by it on fd 3, or
 * connecting through `nri-wire record` to its NRI socket.
 */
type Mode = "socket" | "fd" | "recorded";

/** What the runtime did with a plugin in one run that passed its checks. */
interface Verdict {
  accepted: boolean;
  /** Its deprecation warnings, as loggedDeprecations gives them. */
  deprecations: string[];
}

/** A runtime, its state and log directories, the number of runs so far and their verdicts. */
interface Suite {
  runtime: RuntimeUnderTest;
  built: Built;
  dir: string;
  logs: string;
  runs: number;
  /** By `<plugin label> <mode>`. */
  verdicts: Map<string, Verdict>;
}

/**
 * Starts the runtime (and the plugin), drives the lifecycle, stops everything by PID. When the
 * runtime is known to refuse the plugin, waits for that refusal instead of the lifecycle.
 */
async function runOnce(s: Suite, p: PluginUnderTest, mode: Mode): Promise<Outcome> {
  const n = ++s.runs;
  const files = pluginFiles(s.logs, n);
  const rt: RunningRuntime = await s.runtime.start(s, n, mode === "fd" ? p : undefined);
  let plugin: Started | undefined;
  let recorder: Started | undefined;
  const recorderLog = join(s.logs, `record-${n}.log`);
  const capture = join(s.logs, `capture-${n}`);
  const tools = { crictl: s.built.CRICTL!, criClient: s.built.CRI_CLIENT!, image: s.built.IMAGE!, endpoint: rt.endpoint, log: rt.log };
  const what = `${p.label} (${mode}) with ${s.runtime.name}`;
  const leaks: string[] = [];
  let failed = true;
  try {
    let socket = rt.nriSocket;
    if (mode === "recorded") {
      // The proxy's socket sits in the state directory, so a recorder left running counts as a leak.
      socket = join(s.dir, `record-${n}.sock`);
      const r = startLogged(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "record", "--listen", socket, "--upstream", rt.nriSocket, "--out", capture, "--once"], recorderLog);
      recorder = r;
      await waitUntil(() => readText(recorderLog).includes("record: listening on "), `${what}: nri-wire record did not listen`, 60_000, () => `; exited: ${r.done()}; its log: ${recorderLog}`);
    }
    if (mode !== "fd") {
      const [cmd, ...args] = p.argv;
      plugin = startLogged("sh", ["-c", 'out=$1 err=$2; shift 2; exec "$@" >"$out" 2>"$err"', "sh", files.out, files.err, cmd!, ...args, "--socket", socket], "/dev/null", {
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
    return { observed, lines: pluginLines(files.out), log: rt.log, runtimeDeprecations, ...(recorder === undefined ? {} : { capture: `${capture}.index.json` }) };
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
      else if (alive()) signal(pid, "SIGKILL");
    }
    if (recorder !== undefined) {
      // With --once it writes the capture and exits once the plugin's connection has ended.
      const r = recorder;
      await waitUntil(() => r.done(), "", 15_000).catch(() => {
        leaks.push(`nri-wire record (pid ${r.pid}) still running after the plugin's connection ended; its log: ${recorderLog}`);
      });
      await stop(r);
    }
    await waitUntil(() => processesUnder(s.dir).length === 0, "", 15_000).catch(() => {
      for (const q of processesUnder(s.dir)) {
        leaks.push(`process ${q.pid} left behind: ${q.cmdline.slice(0, 200)}`);
        signal(q.pid, "SIGKILL");
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
  const events = o.lines.filter((l) => l.event !== undefined && LIFECYCLE.has(l.event));
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
  const warning = (e: string) => `${id}: NRI plugin uses a deprecated interface. does not implement a dedicated ${e} RPC call`;
  expect(loggedDeprecations(o.log).sort(), where).toEqual(r.deprecationWarnings(p).map(warning).sort());
  expect(o.runtimeDeprecations.includes("io.containerd.deprecation/nri-plugin-interface"), where).toBe(r.deprecationWarnings(p).length > 0);
  expect(nriErrors(o.log), where).toEqual([]);
}

/** Both runtimes serve only v1alpha1 (NRI v0.12.3 and v0.9.1 have no v1beta1 service). */
const PLUGIN_SERVICE = "nri.pkg.api.v1alpha1.Plugin";
const RUNTIME_SERVICE = "nri.pkg.api.v1alpha1.Runtime";

/**
 * The capture of a recorded run, as `nri-wire decode` reads it back: no damage, the plugin
 * registering (falling back from v1beta1 where it tried that first), every call the runtime
 * answered or made on v1alpha1, and the events the plugin printed, in the order the runtime sent
 * them, each as a dedicated call or as StateChange exactly where the runtime uses StateChange.
 */
async function checkCapture(r: RuntimeUnderTest, p: PluginUnderTest, o: Outcome): Promise<void> {
  const index = o.capture;
  if (index === undefined) throw new Error(`runtimes: no capture recorded; runtime log: ${o.log}`);
  const decoded = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "decode", index]);
  const where = `capture: ${index}; runtime log: ${o.log}`;
  const records = decoded.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as SessionRecord);
  expect(records.filter((x) => x.error !== undefined), where).toEqual([]);
  expect(decoded.code, `${decoded.stderr}; ${where}`).toBe(0);

  const requests = records.filter((x) => x.type === "request");
  const registrations = requests.filter((x) => x.method === "RegisterPlugin");
  const firstService = `nri.pkg.api.${p.registersWith}.Runtime`;
  expect(registrations.map((x) => x.service), where).toEqual(firstService === RUNTIME_SERVICE ? [RUNTIME_SERVICE] : [firstService, RUNTIME_SERVICE]);
  expect(registrations.at(-1)?.payload, where).toMatchObject({ pluginName: p.name, pluginIdx: p.idx });
  // Every other call, either way, on v1alpha1.
  const elsewhere = requests.filter((x) => x.method !== "RegisterPlugin" && x.service !== (x.dir === "r2p" ? PLUGIN_SERVICE : RUNTIME_SERVICE));
  expect(elsewhere.map((x) => `${x.dir} ${x.service}/${x.method}`), where).toEqual([]);

  // The only refusals: the v1beta1 registration, and the dedicated calls the runtime tries before StateChange.
  const refused = records.filter((x) => x.type === "response" && x.status !== undefined).map((x) => `${x.service}/${x.method} ${x.status!.name}`);
  expect(refused, where).toEqual([
    ...(firstService === RUNTIME_SERVICE ? [] : [`${firstService}/RegisterPlugin unimplemented`]),
    ...r.refusedCalls(p).map((e) => `${PLUGIN_SERVICE}/${e} unimplemented`),
  ]);

  // What the runtime delivered (a request the plugin answered without error), in the order it sent it.
  const answered = new Set(records.filter((x) => x.type === "response" && x.dir === "p2r" && x.status === undefined).map((x) => `${x.conn}/${x.stream}`));
  const delivered = requests.filter((x) => x.dir === "r2p" && answered.has(`${x.conn}/${x.stream}`));
  expect(delivered.map((x) => x.translatesTo ?? x.method), where).toEqual(o.lines.flatMap((l) => (l.event === undefined ? [] : [l.event])));
  expect(delivered.filter((x) => x.method === "StateChange").map((x) => x.translatesTo), where).toEqual(r.viaStateChange(p));
}

/**
 * `nri-wire test-plugin --json` in the runtime's dialect and with its timeouts on the plugin, which
 * connects to the runner's socket in the state directory (so a process left behind is found like
 * any other).
 */
async function testPlugin(s: Suite, p: PluginUnderTest): Promise<ConformanceReport> {
  const n = ++s.runs;
  const socket = join(s.dir, `test-plugin-${n}.sock`);
  const out = join(s.logs, `test-plugin-${n}.json`);
  const err = join(s.logs, `test-plugin-${n}.err`);
  const timeouts = ["--registration-timeout", `${NRI_TIMEOUTS.registrationS * 1000}`, "--request-timeout", `${NRI_TIMEOUTS.requestS * 1000}`];
  const args = ["test-plugin", "--json", "--dialect", s.runtime.dialect, ...timeouts, "--socket", socket, "--name", p.name, "--idx", p.idx, "--", ...p.argv, "--socket", socket];
  const what = `nri-wire test-plugin on ${p.label}`;
  const proc = startLogged("sh", ["-c", 'out=$1; shift; exec "$@" >"$out"', "sh", out, ...NRI_WIRE, ...args], err, { ...process.env, NRI_PLUGIN_NAME: p.name, NRI_PLUGIN_IDX: p.idx });
  const leaks: string[] = [];
  try {
    await waitUntil(() => proc.done(), `${what}: it did not finish`, 120_000, () => `; its stderr: ${err}`);
  } finally {
    await stop(proc);
    await waitUntil(() => processesUnder(s.dir).length === 0, "", 15_000).catch(() => {
      for (const q of processesUnder(s.dir)) {
        leaks.push(`process ${q.pid} left behind: ${q.cmdline.slice(0, 200)}`);
        signal(q.pid, "SIGKILL");
      }
    });
  }
  if (leaks.length > 0) throw new Error(`runtimes: ${what} left behind: ${leaks.join("; ")}`);
  const code = await proc.exited;
  try {
    const report = JSON.parse(readText(out)) as ConformanceReport;
    expect(code, `exit code; report: ${out}`).toBe(report.passed ? 0 : 1);
    return report;
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    throw new Error(`runtimes: ${what} exited with ${code} and no JSON report in ${out}: ${e.message}; its stderr: ${err}: ${readText(err).slice(-2000)}`, { cause: e });
  }
}

/**
 * test-plugin's verdict against what the runtime did with the same plugin in this suite: it
 * passes exactly when the runtime accepted the plugin in every mode, and records the deprecations
 * the runtime logged, in its words.
 */
function checkAgreement(s: Suite, p: PluginUnderTest, report: ConformanceReport): void {
  const did = (["socket", "fd", "recorded"] as const).map((mode) => {
    const v = s.verdicts.get(`${p.label} ${mode}`);
    if (v === undefined) throw new Error(`runtimes: no passing ${mode} run of ${p.label} with ${s.runtime.name} to compare test-plugin with (run the whole ${s.runtime.name} suite)`);
    return v;
  });
  expect(report.dialects.map((f) => f.dialect)).toEqual([s.runtime.dialect]);
  const dialect = report.dialects[0]!;
  const failed = dialect.checks.filter((c) => c.status === "fail");
  expect(report.passed, JSON.stringify(failed, null, 2)).toBe(did.every((v) => v.accepted));
  const recorded = dialect.deprecations.map((d) => `${d.plugin}: ${d.message} ${d.detail}`).sort();
  for (const v of did) expect(recorded).toEqual([...v.deprecations].sort());
}

/** The runtimes, by the name build.sh takes; NRI_WIRE_RUNTIMES=containerd (comma-separated) picks some. */
const RUNTIMES: readonly { name: string; make: (b: Built) => RuntimeUnderTest }[] = [
  { name: "containerd", make: containerd },
  { name: "crio", make: crio },
].filter((r) => (process.env.NRI_WIRE_RUNTIMES ?? r.name).split(",").includes(r.name));

describe.skipIf(!gate.ok).each(RUNTIMES)("$name", ({ name, make }) => {
  // Filled by the build in beforeAll; the runtime reads it only when it starts.
  const built: Built = {};
  const runtime = make(built);
  const suite = { runtime, built, verdicts: new Map() } as Suite;
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

  const cases = PLUGINS.flatMap((p) => {
    const refusal = runtime.refusal(p);
    const expect = refusal === undefined ? "every event once and in order, adjustments in the container, exact deprecations, no NRI error" : `refused, as ${runtime.name} does today: "${refusal}"`;
    const runs = (["socket", "fd"] as const).map((mode) => ({ p, mode: mode as Mode | "test-plugin", title: `${p.label}, ${mode}: ${expect}` }));
    const decoded = `nri-wire decode reads back the plugin's events in order on v1alpha1${p.registersWith === "v1beta1" ? " after the RegisterPlugin fallback from v1beta1" : ""}, no damage`;
    const verdict = `${refusal === undefined ? "passes" : "fails"} with ${runtime.deprecationWarnings(p).length > 0 ? "the deprecations it logs" : "no deprecation"}, as ${runtime.name} judged it`;
    return [
      ...runs,
      { p, mode: "recorded" as const, title: `${p.label}, socket through nri-wire record: ${refusal === undefined ? `as above, and ${decoded}` : expect}` },
      { p, mode: "test-plugin" as const, title: `${p.label}: nri-wire test-plugin --dialect ${runtime.dialect} ${verdict}` },
    ];
  });
  it.each(cases)("$title", async ({ p, mode }) => {
    if (mode === "test-plugin") {
      checkAgreement(suite, p, await testPlugin(suite, p));
      return;
    }
    const o = await runOnce(suite, p, mode);
    check(runtime, p, o);
    if (mode === "recorded" && o.observed !== undefined) await checkCapture(runtime, p, o);
    suite.verdicts.set(`${p.label} ${mode}`, { accepted: o.observed !== undefined, deprecations: loggedDeprecations(o.log) });
  }, 300_000);
});
