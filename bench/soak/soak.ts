/**
 * The soak: an NriRuntime in this process and several plugin processes (TypeScript on
 * NriPlugin, and the Go stub plugin when given) driven through pod and container lifecycles
 * without pause, while plugin processes are SIGKILLed at random moments (seeded) and started
 * again. Every few seconds a CSV line reports the counts, the rate, the runtime's memory and
 * file descriptors and the plugins connected. The run fails when an event does not settle in
 * time, a restarted plugin does not register again, the runtime stops serving the plugins that
 * came back, or something leaks (see growth.ts and probe.ts).
 */
import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { clone, create } from "@bufbuild/protobuf";
import { type Container, ContainerState, type LinuxResources, LinuxResourcesSchema, type PodSandbox } from "../../gen/v1beta1/api_pb.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { type Growth, type GrowthSample, judgeGrowth } from "./growth.js";
import { EventLedger, type LedgerCounts } from "./ledger.js";
import { RuntimeState, containerOf, podOf } from "./lifecycle.js";
import { PluginSlot, type SlotExit, type SlotSpec } from "./plugin-slot.js";
import { activeResources, openFds, resourcesGrown, rssKiB } from "./probe.js";
import { Rng } from "./rng.js";
import { GO_PLUGIN, REJECTED_NAME, REJECTION_REASON, type Role, UPDATER_MEMORY_LIMIT, annotationOf, envOf } from "./roles.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** How a soak runs; `soakOptions` fills in the defaults. */
export interface SoakOptions {
  /** How long lifecycles are driven, in seconds (the wind-down and final checks come after), unless `kills` is set. */
  seconds: number;
  /**
   * When set, lifecycles are driven until this many plugin processes have been killed, however
   * long that takes, instead of for `seconds`: a run whose extent is a count, as a test needs.
   */
  kills?: number;
  /** Seeds the kill schedule, the restart delays and the shape of every pod. */
  seed: number;
  /** Where the CSV goes (written as it runs); default `soak.csv` in the run's directory. */
  csvPath?: string;
  /** Seconds between CSV lines. */
  sampleEverySeconds: number;
  /** Pods in flight at once (each a worker driving one pod's lifecycle after another). */
  pods: number;
  /** Mean time between two kills, in ms (each gap uniform in 0.5 to 1.5 times it). */
  meanKillMs: number;
  /** A killed plugin is started again after a uniform delay up to this, in ms. */
  maxRestartDelayMs: number;
  /** The runtime's request timeout, in ms. */
  requestTimeoutMs: number;
  /** Each plugin handler waits a random time up to this, in ms, so kills land inside calls. */
  jitterMs: number;
  /** The Go nri-peer binary, for one Go stub plugin; none when undefined. */
  goPeer: string | undefined;
  /** Where CSV lines and notices are printed. */
  print: (line: string) => void;
}

/** Defaults for everything but the seed. */
export function soakOptions(o: Partial<SoakOptions> & Pick<SoakOptions, "seed">): SoakOptions {
  return {
    seconds: 20,
    sampleEverySeconds: 5,
    pods: 4,
    meanKillMs: 3000,
    maxRestartDelayMs: 1000,
    requestTimeoutMs: 2000,
    jitterMs: 2,
    goPeer: undefined,
    print: (line) => console.log(line),
    ...o,
  };
}

/** A run's figures and verdict. */
export interface SoakResult {
  readonly seed: number;
  /** Seconds lifecycles were driven. */
  readonly seconds: number;
  readonly csvPath: string;
  /** The run's directory: socket, plugin logs, CSV. */
  readonly dir: string;
  readonly counts: LedgerCounts;
  /** Settled events a second over the driven time. */
  readonly eventsPerSecond: number;
  readonly maxLatencyMs: number;
  readonly maxTurnMs: number;
  /** Event errors by message. */
  readonly errors: ReadonlyMap<string, number>;
  readonly growth: Growth;
  readonly rssKiB: { readonly first: number; readonly max: number; readonly last: number };
  readonly fds: { readonly baseline: number; readonly max: number; readonly after: number };
  readonly plugins: number;
  readonly kills: number;
  /** Kills of a process the runtime did not list yet. */
  readonly killsBeforeRegistered: number;
  readonly restarts: number;
  /** Plugin processes the runtime listed as connected after they said they were synchronized. */
  readonly registrations: number;
  /** Plugin processes that exited without being killed (the runtime closed them). */
  readonly selfExits: number;
  readonly unsolicitedUpdates: number;
  readonly synchronizations: number;
  /** Runtime log lines at warn and error level, by message. */
  readonly runtimeLog: ReadonlyMap<string, number>;
  /** Empty when the run passed. */
  readonly failures: string[];
}

const CSV_HEADER = "t_s,issued,ok,error,pending,events_per_s,rss_kib,heap_kib,fds,plugins,kills,restarts,registrations";

/** How long a plugin process may take from spawn to registered (Node start-up included). */
const START_BOUND_MS = 60_000;
/** How long stopped plugins may take to exit, and leaked resources to be released. */
const STOP_BOUND_MS = 10_000;

interface PluginPlan {
  readonly idx: string;
  readonly name: string;
  readonly role: Role | "go";
}

function plans(go: boolean): PluginPlan[] {
  const ts: PluginPlan[] = [
    { idx: "10", name: "annotator", role: "annotator" },
    { idx: "20", name: "updater", role: "updater" },
    { idx: "90", name: "validator", role: "validator" },
  ];
  return go ? [...ts.slice(0, 2), { idx: "50", name: "go-stub", role: "go" }, ...ts.slice(2)] : ts;
}

function normalize(message: string): string {
  return message.replace(/pod-\d+(-ctr-\d+)?/g, "*");
}

/** Runs a soak; resolves with its figures and failures (it rejects only on a bug of its own). */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const rng = new Rng(o.seed);
  const dir = mkdtempSync(join(tmpdir(), "nriw-soak-"));
  const csvPath = o.csvPath ?? join(dir, "soak.csv");
  const failures: string[] = [];
  const fail = (message: string): void => {
    if (failures.length === 0) o.print(`soak: FAILED: ${message}`);
    failures.push(message);
  };

  const baselineFds = openFds();
  const baselineResources = activeResources();
  writeFileSync(csvPath, `${CSV_HEADER}\n`);
  o.print(`soak: seed ${o.seed}, ${o.kills === undefined ? `${o.seconds} s` : `until ${o.kills} kills`}, ${o.pods} pods in flight, a kill every ${o.meanKillMs} ms on average; CSV ${csvPath}; plugin logs in ${dir}`);
  o.print(CSV_HEADER);

  const state = new RuntimeState();
  const runtimeLog = new Map<string, number>();
  const logged = (level: string) => (m: string) => {
    const key = `${level}: ${normalize(m)}`;
    if (runtimeLog.has(key) || runtimeLog.size < 60) runtimeLog.set(key, (runtimeLog.get(key) ?? 0) + 1);
  };
  let unsolicitedUpdates = 0;
  let synchronizations = 0;
  const runtime = new NriRuntime({
    name: "nri-wire-soak",
    version: "v1",
    socketPath: join(dir, "nri.sock"),
    pluginPath: join(dir, "no-plugins"),
    pluginConfigPath: join(dir, "no-conf"),
    requestTimeoutMs: o.requestTimeoutMs,
    synchronize: async (sync) => {
      synchronizations++;
      const { pods, containers } = state.snapshot();
      await sync(pods, containers);
    },
    updateContainers: (updates) => {
      unsolicitedUpdates += updates.length;
      return [];
    },
    log: { warn: logged("warn"), error: logged("error") },
  });

  const plan = plans(o.goPeer !== undefined);
  // Each plugin is tried in turn, and a validator once more: the longest an event can take.
  const ledger = new EventLedger((plan.length + 1) * o.requestTimeoutMs + 5000);
  let stopping = false;
  let finalStop = false;
  let selfExits = 0;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, f: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
  };

  const onExit = (slot: PluginSlot, exit: SlotExit): void => {
    if (finalStop) return;
    if (!exit.killed) {
      selfExits++;
      if (exit.code !== 0) fail(`soak: plugin ${slot.spec.id} (pid ${exit.pid}) exited by itself with code ${exit.code} signal ${exit.signal}; its log ends:\n${slot.logTail()}`);
    }
    later(rng.int(0, o.maxRestartDelayMs), () => {
      if (!finalStop && slot.state === "down") slot.start();
    });
  };
  const slots = plan.map((p, i) => {
    const base = ["--socket", join(dir, "nri.sock"), "--idx", p.idx, "--name", p.name];
    const spec: SlotSpec =
      p.role === "go"
        ? { id: `${p.idx}-${p.name}`, command: [o.goPeer!, ["plugin", ...base]], isReady: (l) => l.includes('"event":"Synchronize"'), logPath: join(dir, `${p.idx}-${p.name}.log`), cwd: ROOT }
        : {
            id: `${p.idx}-${p.name}`,
            command: [process.execPath, ["--import", "tsx", join(ROOT, "bench/soak/plugin.ts"), ...base, "--role", p.role, "--seed", String(o.seed + i), "--jitter-ms", String(o.jitterMs)]],
            isReady: (l) => l === "ready",
            logPath: join(dir, `${p.idx}-${p.name}.log`),
            cwd: ROOT,
          };
    return new PluginSlot(spec, onExit);
  });
  const connected = (): number => runtime.plugins.filter((p) => !p.closed && p.kind !== "builtin").length;
  const listed = (id: string): boolean => runtime.plugins.some((p) => p.id === id && !p.closed);
  let registrations = 0;

  // The watchdog: events past their bound, plugins that do not register, or not for long.
  const watch = (): void => {
    const late = ledger.overdue();
    if (late !== undefined) fail(late);
    for (const s of slots) checkSlot(s);
  };
  const checkSlot = (s: PluginSlot): void => {
    if (s.dying) return;
    const now = performance.now();
    if (s.state === "starting" && now - s.startedAt > START_BOUND_MS) {
      fail(`soak: plugin ${s.spec.id} (pid ${s.pid}) has not registered ${Math.round(now - s.startedAt)} ms after it was started; its log ends:\n${s.logTail()}`);
      s.startedAt = now;
    }
    if (s.state === "ready" && !s.confirmed) {
      if (listed(s.spec.id)) {
        s.confirmed = true;
        registrations++;
      } else if (now - s.readyAt > ledger.boundMs) {
        fail(`soak: plugin ${s.spec.id} (pid ${s.pid}) synchronized ${Math.round(now - s.readyAt)} ms ago but the runtime does not list it`);
        s.readyAt = now;
      }
    }
  };
  const watchdog = setInterval(watch, 100);

  const samples: GrowthSample[] = [];
  const t0 = performance.now();
  let last = { t: 0, settled: 0 };
  const sample = (): void => {
    const t = (performance.now() - t0) / 1000;
    const c = ledger.counts();
    const settled = c.ok + c.error;
    const rate = t > last.t ? (settled - last.settled) / (t - last.t) : 0;
    last = { t, settled };
    const s = { t, rssKiB: rssKiB(), fds: openFds() };
    samples.push(s);
    const kills = slots.reduce((n, x) => n + x.kills, 0);
    const restarts = slots.reduce((n, x) => n + x.spawns, 0) - slots.length;
    const heap = Math.round(process.memoryUsage().heapUsed / 1024);
    const line = [t.toFixed(1), c.issued, c.ok, c.error, c.pending, rate.toFixed(1), s.rssKiB, heap, s.fds, connected(), kills, restarts, registrations].join(",");
    appendFileSync(csvPath, `${line}\n`);
    o.print(line);
  };

  // One pod's whole lifecycle; `event` issues one event through the ledger.
  let podSeq = 0;
  const lifecycle = async (r: Rng, verify = false): Promise<void> => {
    const n = ++podSeq;
    const pod: PodSandbox = podOf(n);
    state.pods.set(pod.id, pod);
    const ev = async <T>(what: string, call: () => Promise<T>): Promise<T | undefined> => {
      await nextTurn();
      return ledger.track(`${what} ${pod.id}`, call);
    };
    await ev("runPodSandbox", () => runtime.runPodSandbox({ pod }));
    if (r.chance(0.3)) {
      await ev("updatePodSandbox", () => runtime.updatePodSandbox({ pod, linuxResources: pod.linux?.podResources }));
      await ev("postUpdatePodSandbox", () => runtime.postUpdatePodSandbox({ pod }));
    }
    const created = [];
    const n0 = verify ? 2 : r.int(1, 3);
    for (let i = 0; i < n0; i++) {
      const rejected = verify ? i === 1 : r.chance(0.05);
      const ctr = containerOf(pod, i, rejected ? REJECTED_NAME : `app-${i}`);
      const what = `createContainer ${ctr.id}`;
      let error: string | undefined;
      await nextTurn();
      const res = await ledger.track(what, () =>
        runtime.createContainer({ pod, container: ctr }).catch((e: Error) => {
          error = e.message;
          throw e;
        }),
      );
      if (verify) checkCreate(ctr.name, res, error);
      if (res === undefined) continue;
      state.containers.set(ctr.id, ctr);
      created.push(ctr);
      await ev("postCreateContainer", () => runtime.postCreateContainer({ pod, container: ctr }));
      await ev("startContainer", () => runtime.startContainer({ pod, container: ctr }));
      ctr.state = ContainerState.CONTAINER_RUNNING;
      await ev("postStartContainer", () => runtime.postStartContainer({ pod, container: ctr }));
    }
    for (const ctr of created) {
      for (let k = verify ? 1 : r.int(0, 2); k > 0; k--) {
        const res = await ev("updateContainer", () => runtime.updateContainer({ pod, container: ctr, linuxResources: updateResources(ctr) }));
        if (verify) checkUpdate(ctr.id, res);
        await ev("postUpdateContainer", () => runtime.postUpdateContainer({ pod, container: ctr }));
      }
    }
    for (const ctr of created) {
      await ev("stopContainer", () => runtime.stopContainer({ pod, container: ctr }));
      ctr.state = ContainerState.CONTAINER_STOPPED;
      await ev("removeContainer", () => runtime.removeContainer({ pod, container: ctr }));
      state.containers.delete(ctr.id);
    }
    await ev("stopPodSandbox", () => runtime.stopPodSandbox({ pod }));
    await ev("removePodSandbox", () => runtime.removePodSandbox({ pod }));
    state.pods.delete(pod.id);
  };

  // After the chaos, with every plugin back: each one's part must be in the merged answers.
  const checkCreate = (name: string, res: Awaited<ReturnType<NriRuntime["createContainer"]>> | undefined, error: string | undefined): void => {
    if (name === REJECTED_NAME) {
      const validator = plan.find((p) => p.role === "validator")!;
      const want = `validator "${validator.idx}-${validator.name}" rejected container adjustment, reason: ${REJECTION_REASON}`;
      if (error !== want) fail(`soak: after the restarts, CreateContainer of ${REJECTED_NAME} ended with ${JSON.stringify(error ?? "success")}, not ${JSON.stringify(want)}`);
      return;
    }
    if (res === undefined) return fail(`soak: after the restarts, CreateContainer failed: ${error}`);
    const annotations = res.adjust?.annotations ?? {};
    const env = (res.adjust?.env ?? []).map((e) => e.key);
    const want = plan.filter((p) => p.role === "annotator").map((p) => [annotationOf(p.name), envOf(p.name)] as const);
    if (o.goPeer !== undefined) want.push([GO_PLUGIN.annotation, GO_PLUGIN.env]);
    for (const [a, e] of want) {
      if (annotations[a] === undefined || !env.includes(e)) fail(`soak: after the restarts, CreateContainer's adjustment lacks ${a} or ${e}: ${JSON.stringify({ annotations, env })}`);
    }
  };
  const checkUpdate = (id: string, res: Awaited<ReturnType<NriRuntime["updateContainer"]>> | undefined): void => {
    if (res === undefined) return fail("soak: after the restarts, UpdateContainer failed");
    const mine = res.update.filter((u) => u.containerId === id);
    const memory = mine.some((u) => u.linux?.resources?.memory?.limit?.value === BigInt(UPDATER_MEMORY_LIMIT));
    const shares = o.goPeer === undefined || mine.some((u) => u.linux?.resources?.cpu?.shares?.value === GO_PLUGIN.cpuShares);
    if (!memory || !shares) fail(`soak: after the restarts, UpdateContainer's updates lack the updater's memory limit or the Go plugin's CPU shares: ${mine.length} updates of ${id}`);
  };

  const kill = (): void => {
    if (stopping) return;
    const up = slots.filter((s) => s.state !== "down");
    if (up.length > 0) {
      const victim = rng.pick(up);
      // Counted as registered if the runtime lists it by now, even if no watchdog tick saw it.
      checkSlot(victim);
      victim.kill();
    }
    later(Math.round(o.meanKillMs * (0.5 + rng.next())), kill);
  };

  let sampler: NodeJS.Timeout | undefined;
  try {
    await runtime.start();
    for (const s of slots) s.start();
    await until(() => slots.every((s) => s.confirmed) || failures.length > 0, START_BOUND_MS, "every plugin to register at the start", fail);
    sampler = setInterval(sample, o.sampleEverySeconds * 1000);
    const started = performance.now();
    later(Math.round(o.meanKillMs * (0.5 + rng.next())), kill);
    const driving = (): boolean =>
      o.kills === undefined ? performance.now() - started < o.seconds * 1000 : slots.reduce((n, s) => n + s.kills, 0) < o.kills;
    const workers = Array.from({ length: o.pods }, (_, i) => {
      const r = new Rng(o.seed * 31 + i + 1);
      return (async () => {
        while (!stopping && failures.length === 0 && driving()) await lifecycle(r);
      })();
    });
    await Promise.all(workers);
    stopping = true;
    const drivenS = (performance.now() - started) / 1000;
    await ledger.idle();
    sample();
    if (failures.length === 0) {
      // Killed plugins are still being started again: wait for all of them.
      await until(() => slots.every((s) => s.confirmed) || failures.length > 0, START_BOUND_MS, "every plugin to register again after the last kill", fail);
      if (failures.length === 0) await lifecycle(new Rng(o.seed), true);
    }
    const c = ledger.counts();
    const eventsPerSecond = (c.ok + c.error) / drivenS;
    const counts = { ...c };
    clearInterval(sampler);
    sampler = undefined;

    finalStop = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
    await runtime.stop("soak finished");
    await settleWithin(Promise.all(slots.map((s) => s.exited)), STOP_BOUND_MS).then((inTime) => {
      if (inTime) return;
      fail(`soak: plugins still running ${STOP_BOUND_MS} ms after the runtime stopped: ${slots.filter((s) => s.state !== "down").map((s) => s.spec.id).join(", ")}`);
      for (const s of slots) s.terminate();
    });
    await Promise.all(slots.map((s) => s.exited));
    clearInterval(watchdog);

    // Leaks: once everything is stopped, descriptors and handles are back where they started.
    let after = openFds();
    let diff = resourcesGrown(baselineResources, activeResources());
    await until(() => (after = openFds()) <= baselineFds && (diff = resourcesGrown(baselineResources, activeResources())).length === 0, STOP_BOUND_MS, "", () => undefined);
    if (after > baselineFds) fail(`soak: ${after} file descriptors open after everything stopped, ${baselineFds} before the run`);
    if (diff.length > 0) fail(`soak: more active handles after everything stopped than before the run: ${diff.join(", ")}`);
    const growth = judgeGrowth(samples, drivenS);
    for (const f of growth.failures) fail(f);
    const rss = samples.map((s) => s.rssKiB);
    return {
      seed: o.seed,
      seconds: drivenS,
      csvPath,
      dir,
      counts,
      eventsPerSecond,
      maxLatencyMs: ledger.maxLatencyMs,
      maxTurnMs: ledger.maxTurnMs,
      errors: ledger.errors,
      growth,
      rssKiB: { first: rss[0] ?? 0, max: Math.max(0, ...rss), last: rss[rss.length - 1] ?? 0 },
      fds: { baseline: baselineFds, max: Math.max(0, ...samples.map((s) => s.fds)), after },
      plugins: slots.length,
      kills: slots.reduce((n, s) => n + s.kills, 0),
      killsBeforeRegistered: slots.reduce((n, s) => n + s.killsBeforeRegistered, 0),
      restarts: slots.reduce((n, s) => n + s.spawns, 0) - slots.length,
      registrations,
      selfExits,
      unsolicitedUpdates,
      synchronizations,
      runtimeLog,
      failures,
    };
  } finally {
    finalStop = true;
    stopping = true;
    clearInterval(watchdog);
    if (sampler !== undefined) clearInterval(sampler);
    for (const t of timers) clearTimeout(t);
    for (const s of slots) s.terminate();
    await runtime.stop();
  }
}

/**
 * Waits for the next turn of the event loop. Events are issued on one each, as a runtime's
 * events come from I/O: with no plugin connected an event settles without any I/O, and workers
 * issuing events back to back would then run on promise continuations alone, starving timers
 * and child-process reaping, so killed plugins would never be started again.
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The resources an UpdateContainer asks for: the container's, without a pids limit. With one,
 * the reference's merge (which the runtime mirrors) has every plugin updating the container
 * claim it, so a second plugin's update always fails on PidsLimit.
 */
function updateResources(ctr: Container): LinuxResources {
  const res = clone(LinuxResourcesSchema, ctr.linux?.resources ?? create(LinuxResourcesSchema));
  res.pids = undefined;
  return res;
}

/** Resolves once `condition` holds (checked every 20 ms), or calls `onTimeout` after `ms`. */
async function until(condition: () => boolean, ms: number, what: string, onTimeout: (message: string) => void): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) return onTimeout(`soak: timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether `p` settles within `ms`. */
async function settleWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
