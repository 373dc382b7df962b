import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NriPlugin, type PluginHandlers } from "../../src/plugin/index.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { TestRuntime } from "../../src/testing/index.js";
import { runs } from "../support/fc.js";
import { socketPath } from "../support/socket.js";

/**
 * No promise the library hands out stays pending, whatever fails and in whatever order: random
 * interleavings of runtime starts, stops and restarts, plugins that connect, fail to connect,
 * close, stop or throw, events in flight, and a TestRuntime whose plugins start unawaited while
 * it stops. Every promise is tracked; after the sequence everything is stopped, and the run fails
 * naming each promise still pending once a generous hang detector expires (never a timing
 * assertion: every timeout in play is a few hundred ms, the detector is tens of times that).
 */

/** How long a promise may stay pending after everything was stopped before it counts as hung. */
const HANG_MS = 15_000;
/** The runtimes' and plugins' own timeouts: short, so that what they bound ends fast. */
const TIMEOUT_MS = 250;

interface Tracked {
  readonly what: string;
  settled: boolean;
}

/** How tracked promises settled over all runs, by what they were (`plugin start()`: fulfilled or rejected). */
const outcomes = new Map<string, number>();

function count(what: string, how: "fulfilled" | "rejected"): void {
  const key = `${what.replace(/\b\d\d-p\d+\b|\bp\d+\b/gu, "P").replace(/(runtime|TestRuntime) \d+/gu, "$1").replace(/ \(.*\)$/u, "")}: ${how}`;
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
}

interface Real {
  readonly path: string;
  runtime: NriRuntime | undefined;
  readonly runtimes: NriRuntime[];
  readonly plugins: NriPlugin[];
  test: TestRuntime | undefined;
  testStarting: Promise<TestRuntime | undefined> | undefined;
  readonly tests: Promise<TestRuntime | undefined>[];
  readonly tracked: Tracked[];
  readonly promises: Promise<unknown>[];
  seq: number;
}

type Model = Record<string, never>;

function track(r: Real, what: string, p: Promise<unknown>): void {
  const t: Tracked = { what, settled: false };
  r.tracked.push(t);
  r.promises.push(
    p.then(
      () => {
        t.settled = true;
        count(what, "fulfilled");
      },
      () => {
        t.settled = true;
        count(what, "rejected");
      },
    ),
  );
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Handlers of each kind of plugin: answering, throwing, slower than the request timeout. */
const HANDLERS: Record<string, PluginHandlers> = {
  good: { runPodSandbox: () => undefined, createContainer: () => ({ adjust: { annotations: { seen: "yes" } } }) },
  throwing: {
    createContainer: () => {
      throw new Error("refused");
    },
  },
  slow: { createContainer: () => new Promise((r) => setTimeout(() => r({}), TIMEOUT_MS * 2)) },
};

function newRuntime(r: Real): NriRuntime {
  const rt = new NriRuntime({ socketPath: r.path, pluginPath: `${r.path}.none`, name: "rt", version: "1", registrationTimeoutMs: TIMEOUT_MS, requestTimeoutMs: TIMEOUT_MS, log: quiet });
  r.runtimes.push(rt);
  return rt;
}

class StartRuntime implements fc.AsyncCommand<Model, Real> {
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    if (r.runtime !== undefined) return;
    const rt = newRuntime(r);
    r.runtime = rt;
    track(r, `runtime ${r.runtimes.length} start()`, rt.start());
  }
  toString = (): string => "startRuntime";
}

class StopRuntime implements fc.AsyncCommand<Model, Real> {
  constructor(readonly restart: boolean) {}
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    const rt = r.runtime;
    if (rt === undefined) return;
    track(r, `runtime ${r.runtimes.indexOf(rt) + 1} stop()`, rt.stop(this.restart ? undefined : "going away"));
    r.runtime = undefined;
    if (this.restart) {
      const next = newRuntime(r);
      r.runtime = next;
      track(r, `runtime ${r.runtimes.length} start() (restart)`, next.start());
    }
  }
  toString = (): string => (this.restart ? "restartRuntime" : "stopRuntime");
}

class StartPlugin implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly kind: "good" | "throwing" | "slow",
    readonly badPath: boolean,
  ) {}
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    const n = ++r.seq;
    const p = new NriPlugin(HANDLERS[this.kind]!, { name: `p${n}`, idx: String(10 + (n % 80)), socketPath: this.badPath ? `${r.path}.missing` : r.path, registrationTimeoutMs: TIMEOUT_MS * 2, env: {}, log: quiet });
    r.plugins.push(p);
    track(r, `plugin ${p.id} start()`, p.start());
    track(r, `plugin ${p.id} closed`, p.closed);
  }
  toString = (): string => `startPlugin(${this.kind}${this.badPath ? ", no socket" : ""})`;
}

class EndPlugin implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly how: "close" | "stop",
  ) {}
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    const p = r.plugins[this.pick % Math.max(r.plugins.length, 1)];
    if (p === undefined) return;
    if (this.how === "close") p.close(new Error("plugin exits"));
    else track(r, `plugin ${p.id} stop()`, p.stop(new Error("plugin stops"), TIMEOUT_MS));
  }
  toString = (): string => `${this.how}Plugin(${this.pick})`;
}

class Event implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: "create" | "run") {}
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    const rt = r.runtime;
    if (rt === undefined) return;
    const pod = { id: "pod1" };
    track(r, `runtime ${r.runtimes.indexOf(rt) + 1} ${this.which}`, this.which === "create" ? rt.createContainer({ pod, container: { id: "c1", podSandboxId: "pod1" } }) : rt.runPodSandbox({ pod }));
  }
  toString = (): string => `event(${this.which})`;
}

class TestRuntimeStart implements fc.AsyncCommand<Model, Real> {
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    if (r.testStarting !== undefined) return;
    const started = TestRuntime.start({ registrationTimeoutMs: TIMEOUT_MS, requestTimeoutMs: TIMEOUT_MS, log: quiet });
    track(r, `TestRuntime ${r.tests.length + 1} start()`, started);
    const t = started.then(
      (x) => (r.test = x),
      () => undefined,
    );
    r.testStarting = t;
    r.tests.push(t);
    await t;
  }
  toString = (): string => "testRuntime.start";
}

class TestRuntimeStartPlugin implements fc.AsyncCommand<Model, Real> {
  constructor(readonly kind: "good" | "throwing" | "slow") {}
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    const t = r.test;
    if (t === undefined) return;
    const n = ++r.seq;
    track(r, `TestRuntime startPlugin(p${n})`, t.startPlugin(HANDLERS[this.kind]!, { name: `p${n}`, idx: String(10 + (n % 80)), env: {}, registrationTimeoutMs: TIMEOUT_MS * 2, log: quiet }));
  }
  toString = (): string => `testRuntime.startPlugin(${this.kind})`;
}

class TestRuntimeEvent implements fc.AsyncCommand<Model, Real> {
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    const t = r.test;
    if (t === undefined) return;
    track(r, "TestRuntime createContainer", t.createContainer({ pod: { id: "pod1" }, container: { id: "c1", podSandboxId: "pod1" } }));
  }
  toString = (): string => "testRuntime.createContainer";
}

class TestRuntimeStop implements fc.AsyncCommand<Model, Real> {
  check = (): boolean => true;
  async run(_: Model, r: Real): Promise<void> {
    const t = r.test;
    if (t === undefined) return;
    track(r, "TestRuntime stop()", t.stop());
    track(r, "TestRuntime closed", t.closed);
    r.test = undefined;
    r.testStarting = undefined;
  }
  toString = (): string => "testRuntime.stop";
}

/**
 * Lets I/O and timers run for a while (event-loop turns, or some milliseconds for registrations
 * and timeouts to happen), so that what was started meets what comes next at any stage.
 */
class Turns implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly n: number,
    readonly ms: number,
  ) {}
  check = (): boolean => true;
  async run(): Promise<void> {
    for (let i = 0; i < this.n; i++) await new Promise((r) => setImmediate(r));
    if (this.ms > 0) await new Promise((r) => setTimeout(r, this.ms));
  }
  toString = (): string => `turns(${this.n}, ${this.ms} ms)`;
}

const kinds = fc.constantFrom("good", "throwing", "slow") as fc.Arbitrary<"good" | "throwing" | "slow">;
const commands = fc.commands(
  [
    fc.constant(new StartRuntime()),
    fc.boolean().map((restart) => new StopRuntime(restart)),
    fc.tuple(kinds, fc.boolean()).map(([k, bad]) => new StartPlugin(k, bad)),
    fc.tuple(fc.nat(7), fc.constantFrom("close", "stop") as fc.Arbitrary<"close" | "stop">).map(([i, how]) => new EndPlugin(i, how)),
    fc.constantFrom("create", "run").map((w) => new Event(w as "create" | "run")),
    fc.constant(new TestRuntimeStart()),
    kinds.map((k) => new TestRuntimeStartPlugin(k)),
    fc.constant(new TestRuntimeEvent()),
    fc.constant(new TestRuntimeStop()),
    // Listed three times: time passing is what lets a plugin get in before the next blow.
    ...[1, 2, 3].map(() => fc.tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom(0, 2, 10, 30, 80)).map(([n, ms]) => new Turns(n, ms))),
  ],
  { maxCommands: 24, size: "max" },
);

/** Stops everything still running, then waits for every tracked promise; the labels of those still pending when the detector fires. */
async function teardown(r: Real): Promise<string[]> {
  for (const rt of r.runtimes) track(r, `runtime ${r.runtimes.indexOf(rt) + 1} stop() (teardown)`, rt.stop());
  for (const p of r.plugins) p.close(new Error("teardown"));
  for (const t of await Promise.all(r.tests)) if (t !== undefined) track(r, "TestRuntime stop() (teardown)", t.stop());
  let timer: NodeJS.Timeout | undefined;
  const detector = new Promise<void>((resolve) => (timer = setTimeout(resolve, HANG_MS)));
  // Promises tracked while waiting (none are) would be missed: the list is complete here.
  await Promise.race([Promise.all(r.promises), detector]);
  clearTimeout(timer);
  return r.tracked.filter((t) => !t.settled).map((t) => t.what);
}

describe("every promise settles", () => {
  it("whatever the interleaving of starts, stops, restarts, connect failures, plugin exits and events, on both sides", async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const r: Real = { path: socketPath(), runtime: undefined, runtimes: [], plugins: [], test: undefined, testStarting: undefined, tests: [], tracked: [], promises: [], seq: 0 };
        let pending: string[] = [];
        try {
          await fc.asyncModelRun(() => ({ model: {}, real: r }), cmds);
        } finally {
          pending = await teardown(r);
        }
        expect(pending, `pending ${HANG_MS} ms after everything was stopped`).toEqual([]);
      }),
      { numRuns: runs(0.6) },
    );
    // What the runs exercised, for the log: how each kind of promise settled.
    console.log(`settled: ${[...outcomes].sort().map(([k, n]) => `${k} ${n}`).join("; ")}`);
  }, 600_000);
});

describe("every promise settles: the runtime's own cases", () => {
  it("stop() during start(): start() rejects and nothing is left listening; stop() again is the same promise", async () => {
    const path = socketPath();
    const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", log: quiet });
    const started = rt.start();
    const stopped = rt.stop();
    expect(rt.stop()).toBe(stopped);
    await stopped;
    await expect(started).rejects.toThrow("nri: runtime stopped while starting");
    const p = new NriPlugin(HANDLERS.good!, { name: "late", idx: "10", socketPath: path, env: {}, log: quiet });
    await expect(p.start()).rejects.toThrow(/^nri: cannot connect to .*: connect (ENOENT|ECONNREFUSED) /u);
  });

  it("waitForPlugins rejects when the runtime stops, and at once after", async () => {
    const path = socketPath();
    const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", log: quiet });
    await rt.start();
    const waiting = rt.waitForPlugins(1);
    await rt.stop();
    await expect(waiting).rejects.toThrow("nri: runtime stopped");
    await expect(rt.waitForPlugins(1)).rejects.toThrow("nri: runtime stopped");
  });
});
