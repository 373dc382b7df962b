import { toJson } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { Mux, RUNTIME_SERVICE_CONN } from "../../src/mux/mux.js";
import { Client } from "../../src/ttrpc/client.js";
import { encodeInit } from "../../src/api/messages.js";
import { CreateContainerRequestSchema, RegisterPluginRequestSchema, CreateContainerResponseSchema, UpdateContainerResponseSchema } from "../../gen/v1beta1/api_pb.js";
import { NriPlugin, type PluginHandlers, create } from "../../src/plugin/index.js";
import { TestRuntime, handlerContext } from "../../src/testing/index.js";

const pod = { id: "pod1", name: "p", uid: "u1", namespace: "default" };
const ctr = { id: "ctr1", podSandboxId: "pod1", name: "c", env: ["KEEP=1"] };

describe("TestRuntime", () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function start(...plugins: [string, string, PluginHandlers, ("v1beta1" | "statechange")?][]): Promise<TestRuntime> {
    const runtime = await TestRuntime.start({ containers: [{ id: "ctr0", podSandboxId: "pod0", name: "old" }] });
    cleanup.push(() => runtime.stop());
    for (const [idx, name, handlers, dialect] of plugins) {
      const plugin = new NriPlugin(handlers, { socketPath: runtime.socketPath, name, idx, dialect: dialect ?? "v1beta1" });
      cleanup.push(() => plugin.close());
      await plugin.start();
    }
    await runtime.waitForPlugins(plugins.length);
    return runtime;
  }

  it("merges two plugins' CreateContainer answers as the Go runtime does, empty parts included", async () => {
    const runtime = await start(
      ["10", "a", { createContainer: () => ({ adjust: { annotations: { a: "1" }, env: [{ key: "A", value: "1" }] } }) }],
      ["20", "b", { createContainer: (req) => ({ adjust: { annotations: { b: String(req.container?.env.length) }, env: [{ key: "B", value: "2" }] } }) }],
    );
    const merged = await runtime.createContainer({ pod, container: ctr });
    // Plugin b sees the container as a adjusted it: two environment entries.
    expect(toJson(CreateContainerResponseSchema, merged)).toEqual({
      adjust: {
        annotations: { a: "1", b: "2" },
        env: [
          { key: "A", value: "1" },
          { key: "B", value: "2" },
        ],
        hooks: {},
        linux: { resources: { memory: {}, cpu: {} } },
      },
    });
  });

  it("rejects a conflict with the Go runtime's text, naming the later plugin first", async () => {
    const runtime = await start(
      ["10", "a", { createContainer: () => ({ adjust: { annotations: { same: "a" } } }) }],
      ["20", "b", { createContainer: () => ({ adjust: { annotations: { same: "b" } } }) }],
    );
    await expect(runtime.createContainer({ pod, container: ctr })).rejects.toThrow('plugins "20-b" and "10-a" both tried to set Annotations same');
  });

  it("merges UpdateContainer answers with the target last, records unsolicited updates, and deprecations of old plugins", async () => {
    let plugin!: NriPlugin;
    const runtime = await TestRuntime.start();
    cleanup.push(() => runtime.stop());
    plugin = new NriPlugin(
      {
        updateContainer: (req) => ({ update: [{ containerId: req.container!.id, linux: { resources: { cpu: { shares: { value: 512n } } } } }] }),
        postStartContainer: async () => void (await plugin.updateContainers([{ containerId: "ctr1", linux: { resources: { memory: { limit: { value: 1n << 30n } } } } }])),
      },
      { socketPath: runtime.socketPath, name: "old", idx: "30", dialect: "statechange" },
    );
    cleanup.push(() => plugin.close());
    await plugin.start();
    await runtime.waitForPlugins(1);
    const res = await runtime.updateContainer({ pod, container: ctr });
    expect(toJson(UpdateContainerResponseSchema, res)).toMatchObject({ update: [{ containerId: "ctr1", linux: { resources: { cpu: { shares: { value: "512" } } } } }] });
    await runtime.postStartContainer({ pod, container: ctr });
    expect(runtime.updates.map((u) => [u.plugin, u.update.map((x) => x.containerId)])).toEqual([["30-old", ["ctr1"]]]);
    expect(runtime.deprecations.map((d) => [d.plugin, d.detail])).toEqual([["30-old", "does not implement a dedicated PostStartContainer RPC call"]]);
  });
});

describe("TestRuntime fails loudly", () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function runtimeFor(options: Parameters<typeof TestRuntime.start>[0] = {}): Promise<TestRuntime> {
    const runtime = await TestRuntime.start(options);
    cleanup.push(() => runtime.stop());
    return runtime;
  }

  it("the documented pattern works: an event right after plugin.start() waits for the plugin", async () => {
    const runtime = await runtimeFor();
    const plugin = new NriPlugin({ createContainer: () => ({ adjust: { annotations: { seen: "yes" } } }) }, { socketPath: runtime.socketPath, name: "mine", idx: "10" });
    cleanup.push(() => plugin.close());
    await plugin.start();
    const res = await runtime.createContainer({ pod, container: ctr });
    expect(res.adjust?.annotations).toEqual({ seen: "yes" });
  });

  it("startPlugin resolves once the runtime lists the plugin", async () => {
    const runtime = await runtimeFor();
    await runtime.startPlugin({ runPodSandbox: () => undefined }, { name: "mine", idx: "10" });
    expect(runtime.plugins.map((p) => p.id)).toEqual(["10-mine"]);
  });

  it("an event with no plugin connected rejects and says so", async () => {
    const runtime = await runtimeFor();
    await expect(runtime.createContainer({ pod, container: ctr })).rejects.toThrow(
      "test runtime: CreateContainer reached no plugin: none is registered (start one with startPlugin, or connect one to socketPath)",
    );
  });

  it("an event no registered plugin subscribes to rejects and says so", async () => {
    const runtime = await runtimeFor();
    await runtime.startPlugin({ createContainer: () => ({}) }, { name: "a", idx: "10" });
    await runtime.startPlugin({ createContainer: () => ({}) }, { name: "b", idx: "20" });
    await expect(runtime.stopPodSandbox({ pod })).rejects.toThrow("test runtime: StopPodSandbox reached no plugin: none of 10-a, 20-b subscribes to it");
  });

  it("an event waits for a connected plugin and rejects when it never gets listed", async () => {
    const runtime = await runtimeFor({ registrationTimeoutMs: 200, requestTimeoutMs: 100 });
    // Connected, with a registration the runtime refuses; the connection stays open.
    const socket = connect(runtime.socketPath);
    await new Promise((r) => socket.once("connect", r));
    const mux = new Mux(socket);
    cleanup.push(() => mux.close(new Error("done")));
    const refused = new Client(mux.open(RUNTIME_SERVICE_CONN)).call("nri.pkg.api.v1beta1.Runtime", "RegisterPlugin", encodeInit(RegisterPluginRequestSchema, { pluginName: "bad name", pluginIdx: "10" }));
    await expect(refused).rejects.toThrow("invalid plugin name");
    await expect(runtime.createContainer({ pod, container: ctr })).rejects.toThrow("test runtime: CreateContainer: 0 of 1 connected plugins registered after 400 ms");
  });

  it("a plugin the runtime drops is not waited for: the event says no plugin is registered", async () => {
    const runtime = await runtimeFor({ registrationTimeoutMs: 200 });
    const silent = connect(runtime.socketPath);
    cleanup.push(() => void silent.destroy());
    await new Promise((r) => silent.once("connect", r));
    await expect(runtime.createContainer({ pod, container: ctr })).rejects.toThrow("test runtime: CreateContainer reached no plugin: none is registered (start one with startPlugin, or connect one to socketPath)");
    // The runtime hung up on it.
    if (!silent.closed) await new Promise((r) => silent.once("close", r));
  });
});

describe("TestRuntime events and options", () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it("relays UpdatePodSandbox and PostUpdatePodSandbox, and sends the configuration", async () => {
    const runtime = await TestRuntime.start({ config: ({ name }) => `for ${name}` });
    cleanup.push(() => runtime.stop());
    const seen: string[] = [];
    await runtime.startPlugin(
      {
        configure: (req) => void seen.push(`configure ${req.config}`),
        updatePodSandbox: (req) => void seen.push(`update ${req.pod?.id} ${req.linuxResources?.memory?.limit?.value}`),
        postUpdatePodSandbox: (req) => void seen.push(`post-update ${req.pod?.id}`),
      },
      { name: "pods", idx: "10" },
    );
    // A 64-bit value written as a number; the plugin reads it as a bigint.
    expect(await runtime.updatePodSandbox({ pod, linuxResources: { memory: { limit: 1 << 30 } } })).toBeDefined();
    await runtime.postUpdatePodSandbox({ pod });
    expect(seen).toEqual(["configure for pods", "update pod1 1073741824", "post-update pod1"]);
  });

  it("takes numbers or bigints for 64-bit values and answers with bigints", async () => {
    const runtime = await TestRuntime.start();
    cleanup.push(() => runtime.stop());
    await runtime.startPlugin({ updateContainer: (req) => ({ update: [{ containerId: req.container!.id, linux: { resources: { memory: { limit: Number(req.linuxResources!.memory!.limit!.value) * 2 } } } }] }) }, { name: "x", idx: "10" });
    const asNumber = await runtime.updateContainer({ pod, container: ctr, linuxResources: { memory: { limit: 100 } } });
    const asBigint = await runtime.updateContainer({ pod, container: ctr, linuxResources: { memory: { limit: { value: 100n } } } });
    expect([asNumber.update[0]?.linux?.resources?.memory?.limit?.value, asBigint.update[0]?.linux?.resources?.memory?.limit?.value]).toEqual([200n, 200n]);
  });
});

describe("handlerContext", () => {
  it("builds the context a handler gets, with a deadline and a signal", async () => {
    const abort = new AbortController();
    const ctx = handlerContext({ timeoutMs: 60_000, signal: abort.signal });
    expect([ctx.deadline !== undefined && ctx.deadline > performance.now(), ctx.signal.aborted]).toEqual([true, false]);
    abort.abort(new Error("gone"));
    expect(ctx.signal.aborted).toBe(true);
    const plain = handlerContext();
    expect([plain.deadline, plain.signal.aborted]).toEqual([undefined, false]);
    const timed = handlerContext({ timeoutMs: 20 });
    await new Promise((r) => timed.signal.addEventListener("abort", r));
    expect(timed.signal.aborted).toBe(true);
  });

  it("lets a handler be called directly", async () => {
    const handlers: PluginHandlers = { createContainer: (req, ctx) => ({ adjust: { annotations: { via: `${ctx.signal.aborted ? "aborted" : "live"} ${req.container?.id}` } } }) };
    const res = await handlers.createContainer!(create(CreateContainerRequestSchema, { pod, container: ctr }), handlerContext());
    expect(res).toEqual({ adjust: { annotations: { via: "live ctr1" } } });
  });
});

describe("TestRuntime: errors point home", () => {
  it("a handler's exception ends the event error's cause chain, the very error with its stack", async () => {
    const runtime = await TestRuntime.start();
    try {
      const boom = new Error("no room for ctr1");
      await runtime.startPlugin({ createContainer: () => { throw boom; } }, { name: "thrower", idx: "10", log: { error: () => undefined } });
      const e = await runtime.createContainer({ pod, container: ctr }).then(() => undefined, (x: unknown) => x);
      expect((e as Error).message).toBe("rpc error: code = Unknown desc = no room for ctr1");
      const chain: unknown[] = [];
      for (let c: unknown = e; c instanceof Error; c = c.cause) chain.push(c);
      expect(chain.at(-1)).toBe(boom);
      expect(boom.stack).toContain("test-runtime.test.ts");
    } finally {
      await runtime.stop();
    }
  });

  it("a validator's refusal carries its exception too", async () => {
    const runtime = await TestRuntime.start();
    try {
      const refusal = new Error("memory limit not allowed");
      await runtime.startPlugin({ createContainer: () => ({ adjust: { linux: { resources: { memory: { limit: 1 << 30 } } } } }) }, { name: "setter", idx: "10" });
      await runtime.startPlugin({ validateContainerAdjustment: () => { throw refusal; } }, { name: "validator", idx: "90", log: { error: () => undefined } });
      const refused = await runtime.createContainer({ pod, container: ctr }).then(() => undefined, (x: unknown) => x);
      let last: unknown = refused;
      while (last instanceof Error && last.cause !== undefined) last = last.cause;
      expect([(refused as Error).message, last]).toEqual(["validator plugin 90-validator failed: rpc error: code = Unknown desc = memory limit not allowed", refusal]);
    } finally {
      await runtime.stop();
    }
  });

  it("refuses an unknown handler key with the nearest name", async () => {
    const runtime = await TestRuntime.start();
    try {
      await expect(runtime.startPlugin({ createContainr: () => undefined } as PluginHandlers)).rejects.toThrow('nri: unknown handler "createContainr": did you mean "createContainer"?');
    } finally {
      await runtime.stop();
    }
  });
});

describe("TestRuntime: every promise settles", () => {
  it("stop() settles after a startPlugin not awaited, whose connection it cuts", async () => {
    const runtime = await TestRuntime.start();
    const started = runtime.startPlugin({ createContainer: () => undefined }, { name: "late", idx: "10" });
    const outcome = started.then(() => "started", (e: Error) => e.message);
    await runtime.stop();
    await runtime.closed;
    // Either it got in before the stop, or its connection was cut: it settled either way.
    expect(await outcome).toMatch(/^(started|nri: .*|test runtime: .*)$/u);
  });

  it("startPlugin after stop() rejects at once; stop() again returns the same promise", async () => {
    const runtime = await TestRuntime.start();
    const stopped = runtime.stop();
    expect(runtime.stop()).toBe(stopped);
    await stopped;
    await expect(runtime.startPlugin({ createContainer: () => undefined })).rejects.toThrow("test runtime: startPlugin: the runtime is stopped");
    await expect(runtime.createContainer({ pod, container: ctr })).rejects.toThrow("test runtime: CreateContainer: the runtime is stopped");
  });
});
