import { afterEach, describe, expect, it } from "vitest";
import { NriPlugin } from "../../src/plugin/index.js";
import { type BuiltinPlugin, EventError, NriRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import type { RuntimeCall, RuntimeInterceptor } from "../../src/runtime/interceptors.js";
import type { RuntimeMetrics } from "../../src/runtime/metrics.js";
import { expectRejection } from "../support/errors.js";
import { LogRecorder, cleanups, runCleanups, startRuntime } from "../support/nri-runtime.js";
import { tempDir } from "../support/temp.js";

afterEach(runCleanups);

const pod = { id: "pod0", namespace: "ns" };
const container = { id: "ctr0", podSandboxId: "pod0" };

async function inProcess(builtinPlugins: BuiltinPlugin[], extra: Partial<RuntimeOptions> = {}): Promise<{ runtime: NriRuntime; logs: LogRecorder }> {
  const logs = new LogRecorder();
  const runtime = new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath: tempDir(), builtinPlugins, log: logs.log, ...extra });
  cleanups.push(() => runtime.stop());
  await runtime.start();
  return { runtime, logs };
}

/** Metrics hooks that write down every call, latencies as `>=0`. */
function recording(): { metrics: RuntimeMetrics; calls: string[] } {
  const calls: string[] = [];
  const metrics: RuntimeMetrics = {
    recordPluginInvocation: (p, op, err) => calls.push(`invocation ${p} ${op}${err === undefined ? "" : ` ${err.message}`}`),
    recordPluginLatency: (p, op, ms) => calls.push(`latency ${p} ${op} ${ms >= 0 ? ">=0" : ms}`),
    recordPluginAdjustments: (p, op, adjust, updates, evicts) => calls.push(`adjustments ${p} ${op} ${adjust === undefined ? "-" : Object.keys(adjust.annotations).join(",")} ${updates} ${evicts}`),
    updatePluginCount: (n) => calls.push(`count ${n}`),
    recordPluginDrop: (p, op, err) => calls.push(`drop ${p} ${op} ${err.message}`),
    recordValidationRefusal: (p, reason) => calls.push(`refusal ${p} ${reason}`),
    recordMergeConflict: (p, op, err) => calls.push(`conflict ${p} ${op} ${err.message}`),
  };
  return { metrics, calls };
}

describe("runtime interceptors", () => {
  it("wrap every call to every plugin, builtin or on a socket, the first outermost", async () => {
    const log: string[] = [];
    const tag = (name: string): RuntimeInterceptor => (next) => async (call) => {
      log.push(`${name}>${call.method} ${call.plugin.id} ${call.plugin.kind} ${call.timeoutMs}`);
      const answer = await next(call);
      log.push(`<${name}`);
      return answer;
    };
    const { runtime } = await startRuntime({ builtinPlugins: [{ idx: "05", name: "in", handlers: { createContainer: () => ({}) } }], interceptors: [tag("a"), tag("b")], requestTimeoutMs: 1500 });
    const plugin = new NriPlugin({ createContainer: () => ({}) }, { idx: "10", name: "out", env: {}, socketPath: runtime.socketPath! });
    cleanups.push(() => plugin.close());
    await plugin.start();
    await runtime.waitForPlugins(2);
    log.length = 0;
    await runtime.createContainer({ pod, container });
    expect(log).toEqual(["a>createContainer 05-in builtin 1500", "b>createContainer 05-in builtin 1500", "<b", "<a", "a>createContainer 10-out external 1500", "b>createContainer 10-out external 1500", "<b", "<a"]);
  });

  it("see Configure, Synchronize and Shutdown too, and the timeout left for each Synchronize page", async () => {
    const calls: string[] = [];
    const { runtime } = await startRuntime({ interceptors: [(next) => (call) => (calls.push(call.method), next(call))] });
    const plugin = new NriPlugin({ runPodSandbox: () => undefined, shutdown: () => undefined }, { idx: "10", name: "out", env: {}, socketPath: runtime.socketPath! });
    await plugin.start();
    await runtime.waitForPlugins(1);
    await runtime.stop("bye");
    await plugin.closed;
    expect(calls).toEqual(["configure", "synchronize", "shutdown"]);
  });

  it("send their metadata to a plugin on a socket, whose interceptors see it", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const { runtime } = await startRuntime({
      interceptors: [
        (next) => (call) => {
          call.metadata.push({ key: "traceparent", value: traceparent });
          return next(call);
        },
      ],
    });
    const seen: string[] = [];
    const plugin = new NriPlugin(
      { createContainer: () => ({}) },
      { idx: "10", name: "out", env: {}, socketPath: runtime.socketPath!, interceptors: [(next) => (call) => (seen.push(`${call.method} ${call.metadata.map((m) => `${m.key}=${m.value}`).join(" ")}`), next(call))] },
    );
    cleanups.push(() => plugin.close());
    await plugin.start();
    await runtime.waitForPlugins(1);
    await runtime.createContainer({ pod, container });
    expect(seen).toEqual([`configure traceparent=${traceparent}`, `synchronize traceparent=${traceparent}`, `createContainer traceparent=${traceparent}`]);
  });

  it("may answer for a plugin, change its request, or fail the call as an answered error", async () => {
    const seen: string[] = [];
    const interceptor: RuntimeInterceptor = (next) => async (call: RuntimeCall) => {
      if (call.method !== "createContainer") return next(call);
      if (call.request.container?.name === "skip") return { $typeName: "nri.pkg.api.v1beta1.CreateContainerResponse", update: [], evict: [], adjust: undefined } as never;
      if (call.request.container?.name === "deny") throw new Error("denied by policy");
      return next({ ...call, request: { ...call.request, container: { ...call.request.container!, name: "renamed" } } });
    };
    const { runtime, logs } = await inProcess([{ idx: "10", name: "a", handlers: { createContainer: (req) => (seen.push(req.container!.name), { adjust: { annotations: { a: "1" } } }) } }], { interceptors: [interceptor] });
    expect((await runtime.createContainer({ pod, container: { ...container, name: "skip" } })).adjust?.annotations ?? {}).toEqual({});
    expect((await runtime.createContainer({ pod, container: { ...container, name: "x" } })).adjust?.annotations).toEqual({ a: "1" });
    const e = await expectRejection(EventError, runtime.createContainer({ pod, container: { ...container, name: "deny" } }));
    expect([e.message, e.plugin, e.event]).toEqual(["denied by policy", "10-a", "CreateContainer"]);
    expect(seen).toEqual(["renamed"]);
    expect(runtime.plugins.map((p) => p.closed)).toEqual([false]);
    expect(logs.at("error")).toEqual([]);
  });

  it("pass on a call built afresh to its plugin; one naming no plugin of the runtime fails as an answered error", async () => {
    const rebuilt: RuntimeInterceptor = (next) => (call) => next({ plugin: call.plugin, method: call.method, request: call.request, timeoutMs: call.timeoutMs, signal: call.signal, metadata: [] } as RuntimeCall);
    const { runtime } = await inProcess([{ idx: "10", name: "a", handlers: { runPodSandbox: () => undefined } }], { interceptors: [rebuilt] });
    await runtime.runPodSandbox({ pod });
    const stranger: RuntimeInterceptor = (next) => (call) =>
      call.method !== "runPodSandbox" ? next(call) : next({ ...Object.fromEntries(Object.entries(call)), plugin: { ...call.plugin, id: "99-stranger" } } as unknown as RuntimeCall);
    const other = await inProcess([{ idx: "10", name: "a", handlers: { runPodSandbox: () => undefined } }], { interceptors: [stranger] });
    const e = await expectRejection(EventError, other.runtime.runPodSandbox({ pod }));
    expect(e.message).toBe("nri: an interceptor passed on a call to 99-stranger that is no plugin of this runtime");
  });

  it("refuse an interceptors option that is not an array of functions, and metrics that are no object", () => {
    expect(() => new NriRuntime({ name: "t", version: "0", interceptors: [{} as RuntimeInterceptor] })).toThrow(new TypeError("nri: interceptors[0] is a object, not a function"));
    expect(() => new NriRuntime({ name: "t", version: "0", metrics: "yes" as unknown as RuntimeMetrics })).toThrow(new TypeError("nri: metrics is a string, not an object of hooks"));
  });
});

describe("runtime metrics hooks", () => {
  it("record each event call, its latency and adjustments, and the plugin count at the end of every event", async () => {
    const { metrics, calls } = recording();
    const { runtime } = await inProcess(
      [
        { idx: "10", name: "a", handlers: { createContainer: () => ({ adjust: { annotations: { a: "1" } }, update: [{ containerId: "other" }] }), stopContainer: () => ({ update: [{ containerId: "other" }] }), runPodSandbox: () => undefined } },
        { idx: "20", name: "b", handlers: { updateContainer: () => ({ evict: [{ containerId: "other" }] }), synchronize: () => ({ update: [] }) } },
      ],
      { metrics },
    );
    expect(calls).toEqual([
      "latency 10-a Synchronize >=0",
      "invocation 10-a Synchronize",
      "adjustments 10-a Synchronize - 0 0",
      "latency 20-b Synchronize >=0",
      "invocation 20-b Synchronize",
      "adjustments 20-b Synchronize - 0 0",
      "count 2",
    ]);
    calls.length = 0;
    await runtime.runPodSandbox({ pod });
    await runtime.createContainer({ pod, container });
    await runtime.updateContainer({ pod, container });
    await runtime.stopContainer({ pod, container });
    await runtime.removeContainer({ pod, container });
    expect(calls).toEqual([
      "latency 10-a RunPodSandbox >=0",
      "invocation 10-a RunPodSandbox",
      "count 2",
      "latency 10-a CreateContainer >=0",
      "invocation 10-a CreateContainer",
      "adjustments 10-a CreateContainer a 1 0",
      "count 2",
      "latency 20-b UpdateContainer >=0",
      "invocation 20-b UpdateContainer",
      "adjustments 20-b UpdateContainer - 0 1",
      "count 2",
      "latency 10-a StopContainer >=0",
      "invocation 10-a StopContainer",
      "adjustments 10-a StopContainer - 1 0",
      "count 2",
      "count 2",
    ]);
  });

  it("record failures with Go's text, drops, validation refusals and merge conflicts", async () => {
    const { metrics, calls } = recording();
    const { runtime } = await inProcess(
      [
        { idx: "10", name: "a", handlers: { createContainer: () => ({ adjust: { annotations: { k: "a" } } }), runPodSandbox: () => Promise.reject(new Error("boom")) } },
        { idx: "20", name: "b", handlers: { createContainer: (req) => ({ adjust: { annotations: { [req.container!.name === "clash" ? "k" : "j"]: "b" } } }) } },
        { idx: "30", name: "v", handlers: { validateContainerAdjustment: (req) => { if (req.container?.name === "refused") throw new Error("not this one"); } } },
        { idx: "40", name: "slow", handlers: { stopPodSandbox: (_req, ctx) => new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason as Error))) } },
      ],
      { metrics, requestTimeoutMs: 50 },
    );
    calls.length = 0;
    await expectRejection(EventError, runtime.runPodSandbox({ pod }));
    await expectRejection(Error, runtime.createContainer({ pod, container: { ...container, name: "clash" } }));
    await expectRejection(Error, runtime.createContainer({ pod, container: { ...container, name: "refused" } }));
    await runtime.stopPodSandbox({ pod });
    expect(calls).toEqual([
      "latency 10-a RunPodSandbox >=0",
      "invocation 10-a RunPodSandbox boom",
      "count 4",
      "latency 10-a CreateContainer >=0",
      "invocation 10-a CreateContainer",
      "adjustments 10-a CreateContainer k 0 0",
      "latency 20-b CreateContainer >=0",
      "invocation 20-b CreateContainer",
      "adjustments 20-b CreateContainer k 0 0",
      'conflict 20-b CreateContainer plugins "20-b" and "10-a" both tried to set Annotations k',
      "count 4",
      "latency 10-a CreateContainer >=0",
      "invocation 10-a CreateContainer",
      "adjustments 10-a CreateContainer k 0 0",
      "latency 20-b CreateContainer >=0",
      "invocation 20-b CreateContainer",
      "adjustments 20-b CreateContainer j 0 0",
      "latency 30-v ValidateContainerAdjustment >=0",
      "invocation 30-v ValidateContainerAdjustment",
      "refusal 30-v not this one",
      "count 4",
      "latency 40-slow StopPodSandbox >=0",
      "invocation 40-slow StopPodSandbox context deadline exceeded",
      "drop 40-slow StopPodSandbox context deadline exceeded",
      "count 3",
    ]);
  });

  it("a hook that throws is logged once and fails no event", async () => {
    const { runtime, logs } = await inProcess([{ idx: "10", name: "a", handlers: { runPodSandbox: () => undefined } }], {
      metrics: {
        updatePluginCount: () => {
          throw new Error("hook broke");
        },
      },
    });
    await runtime.runPodSandbox({ pod });
    await runtime.runPodSandbox({ pod });
    expect(logs.at("error")).toEqual(["nri: metrics hook updatePluginCount failed: hook broke"]);
  });
});
