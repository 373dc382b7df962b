import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { type Socket, connect } from "node:net";
import { resolve } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigureResponseSchema, ContainerSchema, PodSandboxSchema, RegisterPluginRequestSchema } from "../../gen/v1alpha1/api_pb.js";
import { Mux } from "../../src/mux/mux.js";
import { NriPlugin, type PluginHandlers } from "../../src/nri/plugin.js";
import { NriRuntime, type PluginHandle } from "../../src/nri/runtime.js";
import { Client } from "../../src/ttrpc/client.js";
import { Server } from "../../src/ttrpc/server.js";
import { decodeRequest, decodeResponse } from "../../src/ttrpc/envelope.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { socketPath } from "../support/socket.js";
import { eventually, signal } from "../support/wait.js";

/** A handler that never answers on its own: its call ends by deadline or by the connection closing. */
const never = (): Promise<never> => new Promise(() => undefined);
const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

async function startRuntime(extra: Partial<ConstructorParameters<typeof NriRuntime>[0]> = {}): Promise<NriRuntime> {
  const rt = new NriRuntime({ socketPath: socketPath(), name: "test-runtime", version: "0", ...extra });
  await rt.start();
  cleanup.push(() => rt.close());
  return rt;
}

async function startPlugin(rt: NriRuntime, handlers: PluginHandlers, idx = "10", name = "p", extra: Partial<ConstructorParameters<typeof NriPlugin>[1]> = {}): Promise<NriPlugin> {
  const path = (rt as unknown as { options: { socketPath: string } }).options.socketPath;
  const p = new NriPlugin(handlers, { socketPath: path, idx, name, env: {}, ...extra });
  await p.start();
  cleanup.push(() => p.close());
  return p;
}

const pod = { id: "pod1" };
const container = { id: "c1" };

describe("runtime endpoint", () => {
  it("listens on a socket of mode 0600 and replaces a stale socket file", async () => {
    const rt = await startRuntime();
    const path = (rt as unknown as { options: { socketPath: string } }).options.socketPath;
    expect(statSync(path).mode & 0o777).toBe(0o600);
    rt.close();
    const again = new NriRuntime({ socketPath: path, name: "x", version: "0" });
    await again.start();
    again.close();
  });

  it("orders plugins by index and keeps delivering teardown events past a failing plugin", async () => {
    const rt = await startRuntime();
    const order: string[] = [];
    await startPlugin(rt, { stopContainer: () => { order.push("20"); throw new Error("broken stop"); }, runPodSandbox: () => { order.push("20"); throw new Error("broken run"); } }, "20", "b");
    await startPlugin(rt, { stopContainer: () => { order.push("05"); }, runPodSandbox: () => { order.push("05"); } }, "05", "a");
    await startPlugin(rt, { stopContainer: () => { order.push("30"); }, runPodSandbox: () => { order.push("30"); } }, "30", "c");
    await rt.waitForPlugins(3);
    expect(rt.plugins.map((p) => p.id)).toEqual(["05-a", "20-b", "30-c"]);
    const res = await rt.dispatch("stopContainer", { pod, container });
    expect(order).toEqual(["05", "20", "30"]);
    expect(res.map((r) => [r.plugin.id, r.error?.message])).toEqual([
      ["05-a", undefined],
      ["20-b", "nri: plugin 20-b: StopContainer: unknown: broken stop"],
      ["30-c", undefined],
    ]);
    // A failure on a non-teardown event stops delivery and is thrown.
    order.length = 0;
    await expect(rt.dispatch("runPodSandbox", { pod })).rejects.toThrow("nri: plugin 20-b: RunPodSandbox: unknown: broken run");
    expect(order).toEqual(["05", "20"]);
  });

  it("closes a plugin that exceeds the request timeout, as the reference does, and the plugin hears why", async () => {
    const dropped = signal();
    const rt = await startRuntime({ requestTimeoutMs: 100, onPluginClosed: () => dropped.fire() });
    const p = await startPlugin(rt, { startContainer: never });
    await rt.waitForPlugins(1);
    await expect(rt.dispatch("startContainer", { pod, container })).rejects.toThrow(
      "nri: plugin 10-p: StartContainer: deadline_exceeded: deadline of 100 ms exceeded",
    );
    const reason = await p.closed;
    expect(reason.message).toMatch(/^mux: trunk closed by peer/);
    await dropped.promise;
    expect(rt.plugins).toEqual([]);
  });

  it("a plugin dying mid-call fails that call and delivery goes on to the next plugin", async () => {
    const rt = await startRuntime();
    let dying: NriPlugin | undefined;
    dying = await startPlugin(rt, { removeContainer: () => { setImmediate(() => dying!.close(new Error("plugin crashed"))); return never(); } }, "01", "dying");
    let reached = false;
    await startPlugin(rt, { removeContainer: () => { reached = true; } }, "02", "next");
    await rt.waitForPlugins(2);
    const res = await rt.dispatch("removeContainer", { pod, container });
    expect(res[0]!.error?.message).toMatch(/^nri: plugin 01-dying: RemoveContainer: unavailable: connection closed: /);
    expect(reached).toBe(true);
  });

  it("the plugin's close callback fires with the reason when the runtime goes away", async () => {
    const rt = await startRuntime();
    const reasons: string[] = [];
    const p = await startPlugin(rt, {}, "10", "p", { onClose: (e) => reasons.push(e.message) });
    rt.close();
    await p.closed;
    // The end of the trunk is seen as end of input or, mid-write, as EPIPE.
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^mux: trunk closed by peer/);
  });

  it("treats an event mask of 0 as every event and refuses unknown bits", async () => {
    const rt = await startRuntime();
    const closed: string[] = [];
    (rt as unknown as { options: { onPluginClosed: (p: PluginHandle | undefined, r: Error) => void } }).options.onPluginClosed = (_p, r) => closed.push(r.message);
    for (const [idx, events] of [["01", 0], ["02", 0x8000]] as const) {
      const path = (rt as unknown as { options: { socketPath: string } }).options.socketPath;
      await rawPlugin(path, idx, events);
    }
    await rt.waitForPlugins(1);
    expect(rt.plugins.map((p) => [p.id, p.events])).toEqual([["01-raw", 0x3fff]]);
    await eventually(() => closed.length > 0, "the runtime to drop plugin 02");
    expect(closed).toEqual(["nri: plugin 02-raw: setup failed: nri: event mask 0x8000 has unknown bits 0x8000"]);
  });

  it("pages Synchronize when the state does not fit one message; the plugin sees it once", async () => {
    const pods = Array.from({ length: 60 }, (_, i) => create(PodSandboxSchema, { id: `pod${i}`, annotations: { blob: "x".repeat(100_000) } }));
    const containers = [create(ContainerSchema, { id: "c" })];
    const rt = await startRuntime({ synchronize: () => ({ pods, containers }) as never });
    const seen: number[] = [];
    await startPlugin(rt, { synchronize: (req) => { seen.push(req.pods.length + req.containers.length); } });
    expect(seen).toEqual([61]);
  });

  it("takes unsolicited UpdateContainers, even from inside an event handler, without deadlock", async () => {
    const got: string[] = [];
    const rt = await startRuntime({ onUpdateContainers: (p, req) => { got.push(`${p.id}:${req.update.map((u) => u.containerId).join(",")}`); return []; } });
    let plugin: NriPlugin | undefined;
    plugin = await startPlugin(rt, {
      createContainer: async (req) => {
        await plugin!.updateContainers([{ containerId: "other" }]);
        return { adjust: { annotations: { done: req.container?.id ?? "" } } };
      },
    });
    await rt.waitForPlugins(1);
    const res = await rt.dispatch("createContainer", { pod, container });
    expect(res[0]!.response?.adjust?.annotations).toEqual({ done: "c1" });
    expect(got).toEqual(["10-p:other"]);
  });

  it("refuses a connection that never registers, after the registration timeout", async () => {
    const closed: string[] = [];
    const dropped = signal();
    const rt = await startRuntime({ registrationTimeoutMs: 100, onPluginClosed: (_p, r) => { closed.push(r.message); dropped.fire(); } });
    const path = (rt as unknown as { options: { socketPath: string } }).options.socketPath;
    const s = connect(path);
    cleanup.push(() => s.destroy());
    await dropped.promise;
    expect(closed).toEqual(["nri: plugin: setup failed: nri: plugin did not register within 100 ms"]);
  });
});

/** A v1alpha1 plugin built from raw parts that answers Configure with `events`. */
async function rawPlugin(path: string, idx: string, events: number): Promise<void> {
  const s: Socket = connect(path);
  await new Promise((r) => s.once("connect", r));
  cleanup.push(() => s.destroy());
  const mux = new Mux(s);
  new Server()
    .register("nri.pkg.api.v1alpha1.Plugin", {
      Configure: { kind: "unary", handler: () => toBinary(ConfigureResponseSchema, create(ConfigureResponseSchema, { events })) },
      Synchronize: { kind: "unary", handler: () => new Uint8Array(0) },
    })
    .serve(mux.open(1));
  await new Client(mux.open(2)).call(
    "nri.pkg.api.v1alpha1.Runtime",
    "RegisterPlugin",
    toBinary(RegisterPluginRequestSchema, create(RegisterPluginRequestSchema, { pluginName: "raw", pluginIdx: idx })),
  );
}

describe("plugin endpoint", () => {
  it("subscribes to exactly the events it has handlers for", async () => {
    const { eventsOf } = await import("../../src/nri/plugin.js");
    expect(eventsOf({ runPodSandbox: () => undefined, stopContainer: () => undefined, configure: () => undefined })).toBe((1 << 0) | (1 << 9));
    const rt = await startRuntime();
    await startPlugin(rt, { postUpdatePodSandbox: () => undefined, validateContainerAdjustment: () => undefined });
    await rt.waitForPlugins(1);
    expect(rt.plugins[0]!.events).toBe((1 << 12) | (1 << 13));
    // An event the plugin did not subscribe to is not delivered.
    expect(await rt.dispatch("runPodSandbox", { pod })).toEqual([]);
  });

  it("times out a registration the runtime never completes", async () => {
    const path = socketPath();
    // A runtime that accepts and registers but never configures.
    const { createServer } = await import("node:net");
    const net = createServer((sock) => {
      const mux = new Mux(sock);
      new Server().register("nri.pkg.api.v1beta1.Runtime", { RegisterPlugin: { kind: "unary", handler: () => new Uint8Array(0) } }).serve(mux.open(2));
    });
    await new Promise<void>((r) => net.listen(path, r));
    cleanup.push(() => net.close());
    const p = new NriPlugin({}, { socketPath: path, idx: "10", name: "p", env: {}, registrationTimeoutMs: 100 });
    await expect(p.start()).rejects.toThrow("nri: plugin 10-p: registration timed out after 100 ms");
    expect((await p.closed).message).toBe("nri: plugin 10-p: registration timed out after 100 ms");
  });

  it("connects through a socket fd inherited from the runtime that launched it (NRI_PLUGIN_SOCKET)", async () => {
    const rt = await startRuntime();
    const path = (rt as unknown as { options: { socketPath: string } }).options.socketPath;
    const sock = connect(path);
    await new Promise((r) => sock.once("connect", r));
    const child = spawn(process.execPath, ["--import", "tsx", resolve(import.meta.dirname, "../../src/cli/main.ts"), "example-plugin"], {
      stdio: ["ignore", "pipe", "pipe", sock],
      env: { ...process.env, NRI_PLUGIN_SOCKET: "3", NRI_PLUGIN_NAME: "inherited", NRI_PLUGIN_IDX: "07" },
    });
    cleanup.push(() => child.kill());
    await rt.waitForPlugins(1, 20_000);
    sock.destroy();
    expect(rt.plugins.map((p) => [p.id, p.version])).toEqual([["07-inherited", "v1beta1"]]);
  }, 30_000);

  it("answers the recorded Go runtime's requests as the recorded plugins did (status for status)", async () => {
    for (const [session, dialect] of [["new-runtime--new-plugin", "v1alpha1"], ["new-runtime--legacy-plugin", "statechange"]] as const) {
      const frames = JSON.parse(readFileSync(resolve(import.meta.dirname, `../fixtures/vectors/${session}.frames.json`), "utf8")) as {
        messages: { dir: string; connId: number; streamId: number; type: number; bodyHex: string; status?: { code?: number; message?: string } }[];
      };
      const path = socketPath();
      const { createServer } = await import("node:net");
      const replies: { code: number; message: string }[] = [];
      const done = new Promise<void>((resolveDone, rejectDone) => {
        const net = createServer(async (sock) => {
          // A bare v1alpha1 runtime: generated types and the ttrpc layer, replaying requests.
          const mux = new Mux(sock);
          new Server().register("nri.pkg.api.v1alpha1.Runtime", { RegisterPlugin: { kind: "unary", handler: () => new Uint8Array(0) } }).serve(mux.open(2));
          const client = new Client(mux.open(1));
          try {
            for (const m of frames.messages.filter((x) => x.dir === "r2p" && x.connId === 1 && x.type === 1)) {
              const req = decodeRequest(Buffer.from(m.bodyHex, "hex"));
              try {
                await client.call(req.service, req.method, req.payload);
                replies.push({ code: 0, message: "" });
              } catch (e) {
                replies.push({ code: (e as RpcError).code, message: (e as RpcError).rawMessage });
              }
            }
            resolveDone();
          } catch (e) {
            rejectDone(e as Error);
          }
          net.close();
        });
        net.listen(path);
      });
      const p = new NriPlugin(
        { runPodSandbox: () => undefined, createContainer: () => undefined, updateContainer: () => undefined, removePodSandbox: () => undefined },
        { socketPath: path, idx: "10", name: "replay", env: {}, dialect },
      );
      cleanup.push(() => p.close());
      void p.start().catch(() => undefined);
      await done;
      const recorded = frames.messages
        .filter((x) => x.dir === "p2r" && x.connId === 1 && x.type === 2)
        .map((x) => decodeResponse(Buffer.from(x.bodyHex, "hex")).status)
        .map((st) => ({ code: st?.code ?? 0, message: st?.code ? st.message : "" }));
      expect(replies, session).toEqual(recorded);
    }
  }, 30_000);
});

