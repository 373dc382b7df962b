import { afterEach, describe, expect, it } from "vitest";
import { Event, NriPlugin, type PluginHandlers, type PluginOptions } from "../../src/plugin/index.js";
import type { PluginCall, PluginInterceptor } from "../../src/plugin/interceptors.js";
import { EventError, NriRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import { FakeRuntime } from "../support/fake-runtime.js";
import { expectRejection } from "../support/errors.js";
import { logging } from "../support/interceptors.js";
import { socketPath } from "../support/socket.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function runtime(o: Partial<RuntimeOptions> = {}): Promise<NriRuntime> {
  const path = socketPath();
  const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", log: { info: () => undefined, warn: () => undefined, error: () => undefined }, ...o });
  await rt.start();
  cleanup.push(() => rt.stop());
  return rt;
}

/** A plugin started on `rt`; once it is in a NriRuntime's plugin list. */
async function started(rt: NriRuntime | FakeRuntime, handlers: PluginHandlers, o: PluginOptions = {}): Promise<NriPlugin> {
  const p = new NriPlugin(handlers, { idx: "10", name: "p", env: {}, socketPath: rt instanceof NriRuntime ? rt.socketPath! : rt.path, log: { error: () => undefined }, ...o });
  cleanup.push(() => p.close());
  await p.start();
  if (rt instanceof NriRuntime) await rt.waitForPlugins(1);
  return p;
}

const pod = { id: "pod-1", name: "web", namespace: "default", uid: "u1" };
const container = { id: "ctr-1", podSandboxId: "pod-1", name: "app" };

describe("plugin interceptors", () => {
  it("wrap every call of the runtime, handled or not, the first outermost", async () => {
    const rt = await runtime();
    const log: string[] = [];
    await started(rt, { createContainer: () => (log.push("handler"), {}) }, { interceptors: [logging(log, "a"), logging(log, "b")] });
    await rt.createContainer({ pod, container });
    expect(log).toEqual(["a>configure", "b>configure", "<b", "<a", "a>synchronize", "b>synchronize", "<b", "<a", "a>createContainer", "b>createContainer", "handler", "<b", "<a"]);
  });

  it("see the method, event, revision, plugin, request, deadline and metadata", async () => {
    const rt = await runtime({ requestTimeoutMs: 1500 });
    const calls: PluginCall[] = [];
    await started(rt, { createContainer: () => ({}), validateContainerAdjustment: () => undefined }, { interceptors: [(next) => (call) => (calls.push(call), next(call))] });
    await rt.createContainer({ pod, container });
    const [configure, synchronize, create, validate] = calls;
    expect([configure!.method, configure!.event, configure!.revision]).toEqual(["configure", undefined, "v1beta1"]);
    expect(synchronize!.event).toBeUndefined();
    expect([create!.method, create!.event, create!.plugin]).toEqual(["createContainer", Event.CREATE_CONTAINER, { idx: "10", name: "p", id: "10-p" }]);
    if (create!.method !== "createContainer") throw new Error("narrowing");
    expect([create!.request.pod?.namespace, create!.request.container?.id]).toEqual(["default", "ctr-1"]);
    expect(create!.ctx.deadline).toBeTypeOf("number");
    expect(create!.ctx.signal.aborted).toBe(false);
    expect(create!.metadata).toEqual([]);
    expect([validate!.method, validate!.event]).toEqual(["validateContainerAdjustment", undefined]);
  });

  it("see the revision a v1alpha1 runtime speaks", async () => {
    const rt = new FakeRuntime({ version: "v1alpha1" });
    await rt.start();
    cleanup.push(() => rt.close());
    const revisions: string[] = [];
    await started(rt, { runPodSandbox: () => undefined }, { interceptors: [(next) => (call) => (revisions.push(`${call.method} ${call.revision}`), next(call))] });
    expect(revisions).toEqual(["configure v1alpha1", "synchronize v1alpha1"]);
  });

  it("answer without the handler, change the request, and transform errors", async () => {
    const rt = await runtime();
    const seen: string[] = [];
    const interceptor: PluginInterceptor = (next) => async (call) => {
      if (call.method === "createContainer" && call.request.container?.name === "cached") return { adjust: { annotations: { from: "interceptor" } } };
      if (call.method === "createContainer") call.request.container!.name = `${call.request.container!.name}-renamed`;
      try {
        return await next(call);
      } catch (e) {
        throw new Error(`intercepted: ${(e as Error).message}`);
      }
    };
    await started(
      rt,
      {
        createContainer: (req) => {
          seen.push(req.container!.name);
          if (req.container!.name === "bad-renamed") throw new Error("boom");
          return { adjust: { annotations: { from: "handler" } } };
        },
      },
      { interceptors: [interceptor] },
    );
    const cached = await rt.createContainer({ pod, container: { ...container, name: "cached" } });
    expect(cached.adjust?.annotations).toEqual({ from: "interceptor" });
    const handled = await rt.createContainer({ pod, container: { ...container, id: "ctr-2" } });
    expect(handled.adjust?.annotations).toEqual({ from: "handler" });
    const e = await expectRejection(EventError, rt.createContainer({ pod, container: { ...container, id: "ctr-3", name: "bad" } }));
    expect(e.message).toBe("rpc error: code = Unknown desc = intercepted: boom");
    expect(seen).toEqual(["app-renamed", "bad-renamed"]);
  });

  it("refuse an interceptors option that is not an array of functions", () => {
    expect(() => new NriPlugin({}, { idx: "10", name: "p", env: {}, interceptors: [42 as unknown as PluginInterceptor] })).toThrow(new TypeError("nri: interceptors[0] is a number, not a function"));
  });
});
