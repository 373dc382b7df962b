import { spawn } from "node:child_process";
import { openSync, closeSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it, afterEach } from "vitest";
import { AdjustmentBuilder, NriPlugin, type PluginHandlers, type PluginOptions } from "../../src/plugin/index.js";
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

/**
 * A logged handler failure, line by line: its message, then the stack down to the handler that
 * threw, which names the function and points into this file (nri-wire's and Node's frames that
 * called it are left out).
 */
function failure(entry: string | undefined): string[] {
  return (entry ?? "").split("\n").map((l) => l.replace(/\(\/.*\/(plugin\.test\.ts):\d+:\d+\)$/u, "($1)"));
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
    expect(log.length).toBe(1);
    expect(failure(log[0])).toEqual(["error: nri: plugin 10-p: configure failed: bad config: no cpus", "    at Object.configure (plugin.test.ts)"]);
    await eventually(() => logged.length > 0, "the runtime logging the refused plugin");
    expect(logged).toEqual(["failed to start external plugin: failed to configure plugin: rpc error: code = Unknown desc = bad config: no cpus"]);
  });

  it("a first Synchronize handler's error rejects start() and settles closed with its text", async () => {
    const rt = await runtime({ log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const { p, log } = plugin({ synchronize: () => { throw new Error("no state"); } }, { socketPath: rt.socketPath! });
    await expect(p.start()).rejects.toThrow("nri: plugin 10-p: synchronize failed: no state");
    expect((await p.closed).message).toBe("nri: plugin 10-p: synchronize failed: no state");
    expect(log.length).toBe(1);
    expect(failure(log[0])).toEqual(["error: nri: plugin 10-p: Synchronize failed: no state", "    at Object.synchronize (plugin.test.ts)"]);
  });

  it("an event handler's error is logged with its stack, and its text is what the runtime gets", async () => {
    const rt = await runtime();
    const { p, log } = plugin({ runPodSandbox: () => { throw new Error("no room for pod"); } }, { socketPath: rt.socketPath! });
    await p.start();
    await rt.waitForPlugins(1);
    await expect(rt.runPodSandbox({ pod: { id: "p" } })).rejects.toThrow("rpc error: code = Unknown desc = no room for pod");
    expect(log.length).toBe(1);
    expect(failure(log[0])).toEqual(["error: nri: plugin 10-p: RunPodSandbox failed: no room for pod", "    at runPodSandbox (plugin.test.ts)"]);
  });

  it("an error thrown inside a builder is logged down to the handler that called it", async () => {
    const rt = await runtime();
    const { p, log } = plugin({ runPodSandbox: () => void new AdjustmentBuilder().setLinuxCPUShares(-1) }, { socketPath: rt.socketPath! });
    await p.start();
    await rt.waitForPlugins(1);
    await expect(rt.runPodSandbox({ pod: { id: "p" } })).rejects.toThrow("rpc error: code = Unknown desc = nri: linux.resources.cpu.shares: -1 is out of range for uint64 (0 to 18446744073709551615)");
    const lines = failure(log[0]);
    expect(lines[0]).toBe("error: nri: plugin 10-p: RunPodSandbox failed: nri: linux.resources.cpu.shares: -1 is out of range for uint64 (0 to 18446744073709551615)");
    expect(lines.at(-1)).toBe("    at runPodSandbox (plugin.test.ts)");
    expect(lines.slice(1, -1).every((l) => l.includes("/src/"))).toBe(true);
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
    expect(log.length).toBe(1);
    expect(failure(log[0])).toEqual(["error: nri: plugin 10-p: RunPodSandbox failed: no room for pod, later", "    at runPodSandbox (plugin.test.ts)"]);
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
  it("names the variable, the fd and what the fd is", async () => {
    await expect(new NriPlugin({}, { idx: "10", name: "p", env: { NRI_PLUGIN_SOCKET: "x1" } }).start()).rejects.toThrow('nri: invalid NRI_PLUGIN_SOCKET="x1": not a file descriptor number');
    const fd = openSync(import.meta.filename, "r");
    try {
      await expect(new NriPlugin({}, { idx: "10", name: "p", env: { NRI_PLUGIN_SOCKET: String(fd) } }).start()).rejects.toThrow(`nri: invalid NRI_PLUGIN_SOCKET=${fd}: fd ${fd} is a regular file (${import.meta.filename}), not a socket`);
    } finally {
      closeSync(fd);
    }
    await expect(new NriPlugin({}, { idx: "10", name: "p", env: { NRI_PLUGIN_SOCKET: String(fd) } }).start()).rejects.toThrow(
      `nri: invalid NRI_PLUGIN_SOCKET=${fd}: fd ${fd} is not open (EBADF): the runtime's socket did not reach this process (a wrapper such as npx or a script started it without passing fd ${fd} on); run node itself (node ${relative(process.cwd(), process.argv[1]!)}, or exec node from a script)`,
    );
  });

  it("launched through tsx's wrapper, says fd 3 is its own event poll and to run node --import tsx", async () => {
    const tsx = join(import.meta.dirname, "../../node_modules/.bin/tsx");
    const script = relative(process.cwd(), join(import.meta.dirname, "../../examples/logger.ts"));
    const child = spawn(tsx, [script], { stdio: ["ignore", "ignore", "pipe", "pipe"], env: { ...process.env, NRI_PLUGIN_SOCKET: "3", NRI_PLUGIN_NAME: "logger", NRI_PLUGIN_IDX: "10" } });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    // 'close', not 'exit': the last of its stderr may be unread when it exits.
    const code = await new Promise<number | null>((r) => child.once("close", r));
    expect([code, stderr]).toEqual([
      1,
      `nri: invalid NRI_PLUGIN_SOCKET=3: fd 3 is anon_inode:[eventpoll] (opened by this process itself), not a socket: tsx's wrapper process (tsx ${script}, npx tsx ${script}) started this one without passing fd 3 on; run node --import tsx ${script}\n`,
    ]);
  }, 60_000);
});

describe("plugin: every promise it hands out settles", () => {
  it("closed settles with what start() rejects with when it cannot connect, and onClose is called once", async () => {
    const closes: string[] = [];
    const { p } = plugin({ createContainer: () => undefined }, { socketPath: `${socketPath()}.missing`, onClose: (e) => closes.push(e.message) });
    const failed = await p.start().then(() => undefined, (e: Error) => e);
    expect(failed?.message).toMatch(/^nri: cannot connect to .*\.missing: connect ENOENT /u);
    expect(await p.closed).toBe(failed);
    expect(closes).toEqual([failed!.message]);
  });

  it("closed settles when the inherited fd is no socket", async () => {
    const { p } = plugin({ createContainer: () => undefined }, { env: { NRI_PLUGIN_SOCKET: "x" } });
    await expect(p.start()).rejects.toThrow('nri: invalid NRI_PLUGIN_SOCKET="x": not a file descriptor number');
    expect((await p.closed).message).toBe('nri: invalid NRI_PLUGIN_SOCKET="x": not a file descriptor number');
  });

  it("close() while connecting: start() rejects with its reason and the connection made meanwhile is dropped", async () => {
    const rt = await runtime();
    const { p } = plugin({ createContainer: () => undefined }, { socketPath: rt.socketPath! });
    const started = p.start();
    p.close(new Error("changed my mind"));
    await expect(started).rejects.toThrow("changed my mind");
    expect((await p.closed).message).toBe("changed my mind");
    expect(rt.plugins).toEqual([]);
  });

  it("start() twice, or after close(), rejects at once without connecting", async () => {
    const rt = await runtime();
    const { p } = plugin({ createContainer: () => undefined }, { socketPath: rt.socketPath! });
    await p.start();
    await expect(p.start()).rejects.toThrow("nri: plugin 10-p: start() called twice");
    const { p: q } = plugin({ createContainer: () => undefined }, { socketPath: rt.socketPath! });
    q.close(new Error("never mind"));
    await expect(q.start()).rejects.toThrow("never mind");
  });
});

describe("plugin: handlers it would never call", () => {
  it("refuses an unknown handler key at construction, naming the nearest handler", () => {
    expect(() => new NriPlugin({ createContainr: () => undefined } as PluginHandlers)).toThrow(new TypeError('nri: unknown handler "createContainr": did you mean "createContainer"?'));
    expect(() => new NriPlugin({ CreateContainer: () => undefined } as PluginHandlers)).toThrow(new TypeError('nri: unknown handler "CreateContainer": did you mean "createContainer"?'));
    expect(() => new NriPlugin({ onStart: () => undefined } as PluginHandlers)).toThrow(
      new TypeError(
        'nri: unknown handler "onStart": the handlers are configure, synchronize, shutdown, runPodSandbox, updatePodSandbox, postUpdatePodSandbox, stopPodSandbox, removePodSandbox, createContainer, postCreateContainer, startContainer, postStartContainer, updateContainer, postUpdateContainer, stopContainer, removeContainer, validateContainerAdjustment',
      ),
    );
  });

  it("refuses a handler that is not a function, and takes one left undefined", () => {
    expect(() => new NriPlugin({ createContainer: "adjust" } as unknown as PluginHandlers)).toThrow(new TypeError('nri: handler "createContainer" is a string, not a function'));
    expect(() => new NriPlugin({ createContainer: null } as unknown as PluginHandlers)).toThrow(new TypeError('nri: handler "createContainer" is null, not a function'));
    expect(new NriPlugin({ createContainer: undefined, runPodSandbox: () => undefined } as unknown as PluginHandlers, { name: "p", idx: "10", env: {} }).events).toBe(1);
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
