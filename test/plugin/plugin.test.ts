import { openSync, closeSync } from "node:fs";
import { describe, expect, it, afterEach } from "vitest";
import { NriPlugin, type PluginHandlers, type PluginOptions } from "../../src/plugin/index.js";
import { NriRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import { FakeRuntime, type FakeRuntimeOptions } from "../support/fake-runtime.js";
import { socketPath } from "../support/socket.js";
import { eventually } from "../support/wait.js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { StartContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { CreateContainerRequestSchema as AlphaCreateRequestSchema, CreateContainerResponseSchema as AlphaCreateResponseSchema, Event as AlphaEvent, StateChangeEventSchema } from "../../gen/v1alpha1/api_pb.js";
import { translation } from "../../src/plugin/methods.js";
import type { CallContext, Server } from "../../src/ttrpc/server.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

/** A plugin whose log lines are collected. */
function plugin(handlers: PluginHandlers, o: PluginOptions = {}): { p: NriPlugin; log: string[] } {
  const log: string[] = [];
  const p = new NriPlugin(handlers, { idx: "10", name: "p", env: {}, log: { info: (m) => log.push(`info: ${m}`), warn: (m) => log.push(`warn: ${m}`), error: (m) => log.push(`error: ${m}`) }, ...o });
  cleanup.push(() => p.close());
  return { p, log };
}

/** A runtime of nri-wire on a fresh socket, stopped after the test. */
async function runtime(o: Partial<RuntimeOptions> = {}): Promise<NriRuntime> {
  const path = socketPath();
  const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", ...o });
  await rt.start();
  cleanup.push(() => void rt.stop());
  return rt;
}

async function fake(o: FakeRuntimeOptions): Promise<FakeRuntime> {
  const rt = await new FakeRuntime(o).start();
  cleanup.push(() => rt.close());
  return rt;
}

const every: PluginHandlers = {
  runPodSandbox: () => undefined,
  createContainer: () => undefined,
  postUpdatePodSandbox: () => undefined,
  validateContainerAdjustment: () => undefined,
};

describe("plugin: Configure like the Go stub", () => {
  it("a Configure handler answering events 0 subscribes to the handlers' events", async () => {
    const rt = await fake({});
    const { p } = plugin({ ...every, configure: () => ({ events: 0 }) }, { socketPath: rt.path });
    await p.start();
    expect(rt.configured[0]!.events).toBe(0b11000000001001);
    expect(p.subscribed).toBe(0b11000000001001);
  });

  it("sends the failure policy it was given", async () => {
    const rt = await fake({});
    const { p } = plugin(every, { socketPath: rt.path, failurePolicy: { failRequest: true } });
    await p.start();
    expect(rt.configured[0]!.failurePolicy).toMatchObject({ failRequest: true, keepConnected: false });
    const rt2 = await fake({});
    const { p: p2 } = plugin(every, { socketPath: rt2.path });
    await p2.start();
    expect(rt2.configured[0]!.failurePolicy).toBeUndefined();
  });

  it("a Configure handler's error reaches its log, start() and the runtime, not 'trunk closed by peer'", async () => {
    const logged: string[] = [];
    const rt = await runtime({ log: { info: () => undefined, warn: (m) => logged.push(m), error: (m) => logged.push(m) } });
    const { p, log } = plugin({ configure: () => { throw new Error("bad config: no cpus"); } }, { socketPath: rt.socketPath! });
    await expect(p.start()).rejects.toThrow("nri: plugin 10-p: configure failed: bad config: no cpus");
    expect((await p.closed).message).toBe("nri: plugin 10-p: configure failed: bad config: no cpus");
    expect(log).toEqual(["error: nri: plugin 10-p: configure failed: bad config: no cpus"]);
    await eventually(() => logged.length > 0, "the runtime logging the refused plugin");
    expect(logged).toEqual(["failed to start external plugin: failed to configure plugin: rpc error: code = Unknown desc = bad config: no cpus"]);
  });

  it("a first Synchronize handler's error rejects start() and settles closed with its text", async () => {
    const rt = await runtime({ log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const { p, log } = plugin({ synchronize: () => { throw new Error("no state"); } }, { socketPath: rt.socketPath! });
    await expect(p.start()).rejects.toThrow("nri: plugin 10-p: synchronize failed: no state");
    expect((await p.closed).message).toBe("nri: plugin 10-p: synchronize failed: no state");
    expect(log).toEqual(["error: nri: plugin 10-p: Synchronize failed: no state"]);
  });

  it("an event handler's error is logged and its text is what the runtime gets", async () => {
    const rt = await runtime();
    const { p, log } = plugin({ runPodSandbox: () => { throw new Error("no room for pod"); } }, { socketPath: rt.socketPath! });
    await p.start();
    await rt.waitForPlugins(1);
    await expect(rt.runPodSandbox({ pod: { id: "p" } })).rejects.toThrow("rpc error: code = Unknown desc = no room for pod");
    expect(log).toEqual(["error: nri: plugin 10-p: RunPodSandbox failed: no room for pod"]);
  });

  it("an async handler's rejection is logged the same way, and its answer awaited", async () => {
    const rt = await runtime();
    const { p, log } = plugin(
      {
        runPodSandbox: async () => {
          await Promise.resolve();
          throw new Error("no room for pod, later");
        },
        createContainer: async () => {
          await new Promise((resolve) => setImmediate(resolve));
          return { adjust: { annotations: { late: "yes" } } };
        },
      },
      { socketPath: rt.socketPath! },
    );
    await p.start();
    await rt.waitForPlugins(1);
    await expect(rt.runPodSandbox({ pod: { id: "p" } })).rejects.toThrow("rpc error: code = Unknown desc = no room for pod, later");
    expect(log).toEqual(["error: nri: plugin 10-p: RunPodSandbox failed: no room for pod, later"]);
    const created = await rt.createContainer({ pod: { id: "p" }, container: { id: "c" } });
    expect(created.adjust?.annotations).toEqual({ late: "yes" });
  });

  it("returns plain-object updates from handlers, and takes plain objects in updateContainers", async () => {
    const seen: string[] = [];
    const rt = await runtime({
      updateContainers: (updates) => {
        seen.push(JSON.stringify(updates.map((u) => [u.containerId, `${u.linux?.resources?.memory?.limit?.value}`])));
        return [];
      },
    });
    const { p } = plugin(
      { updateContainer: () => ({ update: [{ containerId: "other", linux: { resources: { memory: { limit: 4096 } } } }], evict: [{ containerId: "d", reason: "r" }] }) },
      { socketPath: rt.socketPath! },
    );
    await p.start();
    await rt.waitForPlugins(1);
    const res = await rt.updateContainer({ pod: { id: "p" }, container: { id: "c" }, linuxResources: {} });
    expect(res.update[0]?.containerId).toBe("other");
    expect(res.update[0]?.linux?.resources?.memory?.limit?.value).toBe(4096n);
    expect(await p.updateContainers([{ containerId: "e", linux: { resources: { memory: { limit: 1 } } } }])).toEqual([]);
    expect(seen).toEqual(['[["e","1"]]']);
  });
});

describe("plugin: requests it cannot decode", () => {
  it("answers invalid_argument naming the message and field, and goes on serving", async () => {
    const good = toBinary(StartContainerRequestSchema, create(StartContainerRequestSchema, { container: { id: "c" } }));
    const rt = await fake({
      calls: [
        { method: "StartContainer", payload: Uint8Array.of(0x12, 0x03, 0x0a, 0x01, 0xff) },
        { method: "StartContainer", payload: good },
      ],
    });
    const started: string[] = [];
    const { p, log } = plugin({ startContainer: (req) => void started.push(req.container?.id ?? "") }, { socketPath: rt.path });
    await p.start();
    await eventually(() => rt.seen.length === 2, "both calls answered");
    expect(rt.seen).toEqual([
      "StartContainer failed: invalid_argument: decode nri.pkg.api.v1beta1.Container: field id (1): invalid UTF-8",
      "StartContainer answered 0 bytes",
    ]);
    expect([started, log.filter((l) => l.startsWith("error"))]).toEqual([["c"], []]);
    p.close();
  });
});

describe("plugin: ending itself", () => {
  it("closed carries the runtime's Shutdown reason once the runtime closes the connection", async () => {
    const path = socketPath();
    const runtime = new NriRuntime({ name: "rt", version: "1", socketPath: path, pluginPath: "/nonexistent", log: {} });
    await runtime.start();
    const { p } = plugin({}, { socketPath: path });
    await p.start();
    await runtime.stop("node drained");
    const why = await p.closed;
    expect(why.message).toBe("nri: plugin 10-p: shut down by the runtime: node drained");
    expect((why.cause as Error).message).toBe("mux: trunk closed by peer");
  });

  it("stop() from the Shutdown handler: the runtime gets the answer, then the connection closes", async () => {
    const rt = await fake({ shutdown: "bye" });
    const { p } = plugin({ shutdown: (req) => void p.stop(new Error(`shut down: ${req.reason}`)) }, { socketPath: rt.path });
    await p.start();
    expect((await p.closed).message).toBe("shut down: bye");
    await eventually(() => rt.seen.length === 2, "the runtime seeing the answer and the close");
    expect(rt.seen).toEqual(["Shutdown answered", "closed: mux: trunk closed by peer"]);
  });

  it("close() from the Shutdown handler cuts off the answer (why stop() exists)", async () => {
    const rt = await fake({ shutdown: "bye" });
    const { p } = plugin({ shutdown: () => p.close(new Error("gone")) }, { socketPath: rt.path });
    await p.start();
    expect((await p.closed).message).toBe("gone");
    await eventually(() => rt.seen.length === 2, "the runtime seeing the close");
    expect(rt.seen[0]).toBe("closed: mux: trunk closed by peer");
    expect(rt.seen[1]).toMatch(/^Shutdown failed: /);
  });

  it("stop() before start() closes at once", async () => {
    const { p } = plugin({});
    expect((await p.stop(new Error("never started"))).message).toBe("never started");
  });
});

describe("plugin: runtimes older than the plugin", () => {
  it("infers the NRI version of a runtime that sends none, subscribes only to the events it knows, and says so", async () => {
    const rt = await fake({ configure: { runtimeName: "cri-o", runtimeVersion: "1.34.0" }, validEvents: 0x1fff });
    const { p, log } = plugin(every, { socketPath: rt.path });
    await p.start();
    expect(rt.refusals).toEqual([]);
    expect(rt.configured[0]!.events).toBe(0b01000000001001);
    expect(p.runtime).toEqual({ name: "cri-o", version: "1.34.0", nriVersion: "v0.9.1-0.20250219030224-e597e7849f24", nriVersionInferred: true, revision: "v1beta1" });
    expect(log).toEqual([
      "info: nri: plugin 10-p: inferred NRI v0.9.1-0.20250219030224-e597e7849f24 for runtime cri-o 1.34.0",
      "warn: nri: plugin 10-p: not subscribing to ValidateContainerAdjustment (0x2000): runtime cri-o 1.34.0 has NRI v0.9.1-0.20250219030224-e597e7849f24 (inferred), which does not know them",
    ]);
  });

  it("hands the Configure handler the inferred version, as the Go stub does", async () => {
    const rt = await fake({ configure: { runtimeName: "containerd", runtimeVersion: "v1.7.20" }, validEvents: 0x7ff });
    let seen = "";
    const { p } = plugin({ ...every, configure: (req) => { seen = req.NRIVersion; } }, { socketPath: rt.path });
    await p.start();
    expect(seen).toBe("v0.6.1");
    expect(rt.configured[0]!.events).toBe(0b1001);
  });

  it("with unknownEvents: error, fails Configure instead, naming the events", async () => {
    const rt = await fake({ configure: { runtimeName: "cri-o", runtimeVersion: "v1.32.3" }, validEvents: 0x7ff });
    const { p } = plugin(every, { socketPath: rt.path, unknownEvents: "error" });
    await expect(p.start()).rejects.toThrow(
      "nri: plugin 10-p: configure failed: handlers for events PostUpdatePodSandbox,ValidateContainerAdjustment (0x3000): runtime cri-o v1.32.3 has NRI v0.9.0 (inferred), which does not know them",
    );
  });

  it("fails Configure when none of its events is known: an empty mask would mean every event", async () => {
    const rt = await fake({ configure: { runtimeName: "containerd", runtimeVersion: "v1.7.0" } });
    const { p } = plugin({ validateContainerAdjustment: () => undefined }, { socketPath: rt.path });
    await expect(p.start()).rejects.toThrow("nri: plugin 10-p: configure failed: handlers for events ValidateContainerAdjustment (0x2000): runtime containerd v1.7.0 has NRI v0.3.0 (inferred), which does not know them");
  });

  it("a runtime of unknown NRI version that closes right after Configure: says it refused the configuration, and why it likely did", async () => {
    const rt = await fake({ configure: { runtimeName: "my-runtime", runtimeVersion: "1.0" }, validEvents: 0x7ff });
    const { p, log } = plugin(every, { socketPath: rt.path });
    const expected =
      "nri: plugin 10-p: the runtime closed the connection right after Configure: it refused the configuration; likely cause: its NRI version is unknown and runtimes before NRI v0.10.0 refuse events they do not know; subscribed PostUpdatePodSandbox,ValidateContainerAdjustment (0x3000) may be among them (see the runtime's log for \"invalid plugin events\")";
    await expect(p.start()).rejects.toThrow(expected);
    expect(rt.refusals).toEqual(["invalid plugin events: 0x3000"]);
    expect(log).toEqual(['warn: nri: plugin 10-p: cannot infer the NRI version of unknown runtime "my-runtime"', `error: ${expected}`]);
  });

  it("works with a v1alpha1 runtime that sends everything as StateChange (see also the Go v0.11.0 interop)", async () => {
    const rt = await fake({ configure: { runtimeName: "containerd", runtimeVersion: "v2.1.0" }, validEvents: 0x7ff, version: "v1alpha1" });
    const { p } = plugin(every, { socketPath: rt.path, dialect: "statechange" });
    await p.start();
    expect(p.runtime?.revision).toBe("v1alpha1");
    expect(rt.configured[0]!.events).toBe(0b1001);
  });
});

describe("plugin: an inherited socket fd that is not one", () => {
  it("names the variable and the fd", async () => {
    await expect(new NriPlugin({}, { idx: "10", name: "p", env: { NRI_PLUGIN_SOCKET: "x1" } }).start()).rejects.toThrow('nri: invalid NRI_PLUGIN_SOCKET="x1": not a file descriptor number');
    const fd = openSync(import.meta.filename, "r");
    try {
      await expect(new NriPlugin({}, { idx: "10", name: "p", env: { NRI_PLUGIN_SOCKET: String(fd) } }).start()).rejects.toThrow(`nri: invalid NRI_PLUGIN_SOCKET=${fd}: fd ${fd} is a regular file, not a socket`);
    } finally {
      closeSync(fd);
    }
    await expect(new NriPlugin({}, { idx: "10", name: "p", env: { NRI_PLUGIN_SOCKET: String(fd) } }).start()).rejects.toThrow(`nri: invalid NRI_PLUGIN_SOCKET=${fd}: fd ${fd} is not open (EBADF)`);
  });
});

describe("plugin: a v1alpha1 runtime's calls", () => {
  /** The plugin's Plugin service as a v1alpha1 runtime calls it (the plugin's own server, unstarted). */
  async function alphaService(handlers: PluginHandlers) {
    const { p } = plugin(handlers);
    // Registering with a v1alpha1 runtime loads translation; here it is loaded by hand.
    await translation();
    const server = (p as unknown as { serve(methods: undefined): Server }).serve(undefined);
    const ctx: CallContext = { service: "nri.pkg.api.v1alpha1.Plugin", method: "", metadata: [], timeoutNano: 0, deadline: undefined, signal: new AbortController().signal };
    return (method: string, payload: Uint8Array) => {
      const m = server.lookup("nri.pkg.api.v1alpha1.Plugin", method);
      if (m instanceof Error || m.kind !== "unary") throw new Error(`test: no unary ${method}`);
      return m.handler(payload, ctx);
    };
  }
  const request = toBinary(AlphaCreateRequestSchema, create(AlphaCreateRequestSchema, { pod: { id: "p" }, container: { id: "c" } }));

  it("are answered in the same turn, translated, when the handler answers at once", async () => {
    const call = await alphaService({ createContainer: () => ({ adjust: { annotations: { a: "b" } } }), startContainer: () => undefined });
    const answer = call("CreateContainer", request);
    expect(answer).toBeInstanceOf(Uint8Array);
    expect(fromBinary(AlphaCreateResponseSchema, answer as Uint8Array).adjust?.annotations).toStrictEqual({ a: "b" });
    const started = call("StateChange", toBinary(StateChangeEventSchema, create(StateChangeEventSchema, { event: AlphaEvent.START_CONTAINER, pod: { id: "p" }, container: { id: "c" } })));
    expect(started).toBeInstanceOf(Uint8Array);
    expect((started as Uint8Array).length).toBe(0);
  });

  it("are answered when the promise settles when the handler answers later", async () => {
    const call = await alphaService({ createContainer: async () => ({ adjust: { annotations: { a: "later" } } }) });
    const answer = call("CreateContainer", request);
    expect(answer).toBeInstanceOf(Promise);
    expect(fromBinary(AlphaCreateResponseSchema, await answer).adjust?.annotations).toStrictEqual({ a: "later" });
  });
});
