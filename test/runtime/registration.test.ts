import { lstatSync, promises as fsp, statSync, watch, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ContainerSchema, PodSandboxSchema } from "../../gen/v1beta1/api_pb.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { Client } from "../../src/ttrpc/client.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { MessageType, encodeFrame } from "../../src/ttrpc/frame.js";
import { encodeResponse } from "../../src/ttrpc/envelope.js";
import { Code } from "../../src/ttrpc/status.js";
import { type ScriptedPlugin, cleanups, runCleanups, scriptedPlugin, startRuntime } from "../support/nri-runtime.js";
import { tempDir } from "../support/temp.js";
import { expectRejection } from "../support/errors.js";

afterEach(runCleanups);

const pod = { id: "pod0" };
const container = { id: "ctr0", podSandboxId: "pod0" };


const rpcError = (p: Promise<unknown>): Promise<RpcError> => expectRejection(RpcError, p);

describe("registration", () => {
  it.each([
    ["bad name", "10", "invalid plugin name: invalid plugin name \"bad name\": contains invalid character ' '", "failed to register plugin: plugin registered with an invalid name: invalid plugin name \"bad name\": contains invalid character ' '"],
    ["", "10", "invalid plugin name: invalid plugin name: name is empty", "failed to register plugin: plugin registered with an invalid name: invalid plugin name: name is empty"],
    ["ok", "1", 'invalid plugin index: invalid plugin index "1", must be 2 digits', 'failed to register plugin: plugin "ok" registered with an invalid index: invalid plugin index "1", must be 2 digits'],
    ["ok", "1x", 'invalid plugin index: invalid plugin index "1x" (not [0-9][0-9])', 'failed to register plugin: plugin "ok" registered with an invalid index: invalid plugin index "1x" (not [0-9][0-9])'],
  ])("name %j index %j: the plugin hears the reference's error and the runtime logs its text", async (name, idx, answer, logged) => {
    const { runtime, socket, logs } = await startRuntime();
    const p = await scriptedPlugin(socket, { register: false });
    const err = await rpcError(p.runtime.registerPlugin({ pluginName: name, pluginIdx: idx }));
    expect([err.code, err.rawMessage]).toEqual([Code.UNKNOWN, answer]);
    expect(await logs.waitFor((l) => l.startsWith("error: failed to start external plugin"))).toBe(`error: failed to start external plugin: ${logged}`);
    // As in the reference, hanging up is left to the plugin, which has its answer.
    expect(p.mux.closeReason).toBeUndefined();
    p.mux.close();
    // The runtime keeps serving.
    await scriptedPlugin(socket, { idx: "20", name: "good" });
    await runtime.waitForPlugins(1);
    expect(runtime.plugins.map((x) => x.id)).toEqual(["20-good"]);
  });

  it("a RegisterPlugin that does not decode is INVALID_ARGUMENT naming the message; the runtime keeps serving", async () => {
    const { runtime, socket } = await startRuntime();
    const p = await scriptedPlugin(socket, { register: false });
    const raw = new Client(p.mux.open(2));
    const err = await rpcError(raw.call("nri.pkg.api.v1beta1.Runtime", "RegisterPlugin", Uint8Array.of(0x0a, 0x05, 0x61)));
    expect(err.code).toBe(Code.INVALID_ARGUMENT);
    expect(err.rawMessage).toBe("decode nri.pkg.api.v1beta1.RegisterPluginRequest: field plugin_name (1): length 5 exceeds remaining 1");
    const alpha = await rpcError(raw.call("nri.pkg.api.v1alpha1.Runtime", "RegisterPlugin", Uint8Array.of(0xff)));
    expect(alpha.code).toBe(Code.INVALID_ARGUMENT);
    expect(alpha.rawMessage).toBe("decode nri.pkg.api.v1alpha1.RegisterPluginRequest: truncated varint");
    await scriptedPlugin(socket, { idx: "20", name: "good" });
    await runtime.waitForPlugins(1);
    expect(runtime.plugins.map((x) => x.id)).toEqual(["20-good"]);
  });

  it("a connection that never registers is refused after the registration timeout", async () => {
    const { socket, logs } = await startRuntime({ registrationTimeoutMs: 100 });
    const p = await scriptedPlugin(socket, { register: false });
    expect(await logs.waitFor((l) => l.startsWith("error:"))).toBe("error: failed to start external plugin: plugin registration timed out");
    await p.closed;
  });

  it("an event mask with unknown bits fails configuration with the reference's text", async () => {
    const { runtime, socket, logs } = await startRuntime();
    const p = await scriptedPlugin(socket, { idx: "10", name: "bits", configure: { events: 0x8000 | 1 } });
    expect(await logs.waitFor((l) => l.startsWith("error:"))).toBe("error: failed to start external plugin: invalid plugin events: 0x8000");
    await p.closed;
    expect(runtime.plugins).toEqual([]);
  });

  it("a Configure error is the reference's text", async () => {
    const { socket, logs } = await startRuntime();
    await scriptedPlugin(socket, {
      impl: {
        configure: () => {
          throw new Error("no config for you");
        },
      },
    });
    expect(await logs.waitFor((l) => l.startsWith("error:"))).toBe("error: failed to start external plugin: failed to configure plugin: rpc error: code = Unknown desc = no config for you");
  });

  it("upstream: an event mask of 0 subscribes to every event, validation included", async () => {
    const { runtime, socket } = await startRuntime();
    await scriptedPlugin(socket, { idx: "10", name: "all", configure: { events: 0 }, impl: { createContainer: () => ({}) } });
    await runtime.waitForPlugins(1);
    expect(runtime.plugins[0]?.events).toBe(0x3fff);
    // So a plugin that answers 0 and does not serve ValidateContainerAdjustment fails every CreateContainer.
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(
      /^validator plugin 10-all failed: rpc error: code = Unimplemented desc = /u,
    );
  });

  it("the runtime keeps serving when a plugin answers a stream it never opened", async () => {
    const { runtime, socket } = await startRuntime();
    const p = await scriptedPlugin(socket, { idx: "10", name: "stray", impl: { startContainer: () => ({}) } });
    await runtime.waitForPlugins(1);
    // A response on conn 1 for stream 99, which the runtime never used: dropped, as the reference does.
    const frame = encodeFrame(99, MessageType.Response, 0, encodeResponse(undefined, new Uint8Array(0)));
    const mux = Buffer.alloc(8);
    mux.writeUInt32BE(1, 0);
    mux.writeUInt32BE(frame.length, 4);
    p.socket.write(Buffer.concat([mux, frame]));
    await runtime.startContainer({ pod, container });
    expect(p.calls.filter((c) => c === "StartContainer")).toHaveLength(1);
  });

  it("an answer that does not decode fails the event with protobuf's text; the plugin stays and the next event works", async () => {
    const { runtime, socket } = await startRuntime();
    // A length-delimited field that runs past the end, then a good (empty) answer.
    const answers = [Uint8Array.of(0x0a, 0x05, 0x0a), new Uint8Array(0)];
    await scriptedPlugin(socket, { idx: "10", name: "garbled", configure: { events: 1 << 3 }, raw: { CreateContainer: () => answers.shift()! } });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(/^proto: cannot parse invalid wire-format data$/u);
    expect(runtime.plugins.map((p) => p.id)).toEqual(["10-garbled"]);
    expect((await runtime.createContainer({ pod, container })).adjust?.annotations).toEqual({});
  });
});

describe("Synchronize", () => {
  it("hands the plugins' updates to the runtime's synchronize function, untouched", async () => {
    const got: string[] = [];
    const { runtime, socket } = await startRuntime({
      synchronize: async (sync) => {
        const updates = await sync([create(PodSandboxSchema, pod)], [create(ContainerSchema, container)]);
        got.push(...updates.map((u) => `${u.containerId}:${u.linux?.resources?.cpu?.shares?.value}`));
      },
    });
    await scriptedPlugin(socket, {
      impl: { synchronize: (req) => ({ update: req.containers.map((c) => ({ containerId: c.id, linux: { resources: { cpu: { shares: { value: 7n } } } } })) }) },
    });
    await runtime.waitForPlugins(1);
    expect(got).toEqual(["ctr0:7"]);
  });

  it("a synchronize function that rejects refuses the plugin", async () => {
    let calls = 0;
    const { runtime, socket, logs } = await startRuntime({
      // The first call synchronizes the (no) pre-installed plugins at start.
      synchronize: async (sync) => {
        if (calls++ > 0) throw new Error("not now");
        await sync([], []);
      },
    });
    const p = await scriptedPlugin(socket, {});
    expect(await logs.waitFor((l) => l.startsWith("error:"))).toBe("error: failed to synchronize plugin: not now");
    await p.closed;
    expect(runtime.plugins).toEqual([]);
  });

  const blob = "x".repeat(100_000);
  const bigPods = Array.from({ length: 40 }, (_, i) => create(PodSandboxSchema, { id: `pod${i}`, annotations: { blob } }));
  const bigContainers = Array.from({ length: 20 }, (_, i) => create(ContainerSchema, { id: `ctr${i}`, annotations: { blob } }));

  it("splits a state too large for one message into pages marked more; the updates of the last page count", async () => {
    let updates: string[] = [];
    const { runtime, socket } = await startRuntime({
      synchronize: async (sync) => {
        updates = (await sync(bigPods, bigContainers)).map((u) => u.containerId);
      },
    });
    const pages: [number, number, boolean][] = [];
    await scriptedPlugin(socket, {
      impl: {
        synchronize: (req) => {
          pages.push([req.pods.length, req.containers.length, req.more]);
          return req.more ? { more: true } : { update: [{ containerId: "last-page" }] };
        },
      },
    });
    await runtime.waitForPlugins(1);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.slice(0, -1).every(([, , more]) => more)).toBe(true);
    expect(pages.at(-1)?.[2]).toBe(false);
    expect(pages.reduce((n, [p, c]) => n + p + c, 0)).toBe(60);
    expect(updates).toEqual(["last-page"]);
  });

  it("upstream: when one kind's page size rounds down to 0, paging never ends and the plugin fails at the deadline", async () => {
    // 60 big pods and 1 container: the page shrinks to 0 containers, and the one container is never sent.
    const pods = [...bigPods, ...bigPods.slice(0, 20)];
    const { runtime, socket, logs } = await startRuntime({ requestTimeoutMs: 1000, synchronize: async (sync) => void (await sync(pods, [create(ContainerSchema, container)])) });
    let containersSent = 0;
    let finalPages = 0;
    const p = await scriptedPlugin(socket, {
      impl: {
        synchronize: (req) => {
          containersSent += req.containers.length;
          if (!req.more) finalPages++;
          return { more: req.more };
        },
      },
    });
    expect(await logs.waitFor((l) => l.startsWith("error:"))).toBe("error: failed to synchronize plugin: context deadline exceeded");
    await p.closed;
    expect([containersSent, finalPages]).toEqual([0, 0]);
    expect(runtime.plugins).toEqual([]);
  });

  it("refuses a plugin that answers a page marked more with updates", async () => {
    const pods = Array.from({ length: 60 }, (_, i) => create(PodSandboxSchema, { id: `pod${i}`, annotations: { blob: "x".repeat(100_000) } }));
    const { runtime, socket, logs } = await startRuntime({ synchronize: async (sync) => void (await sync(pods, [])) });
    const p = await scriptedPlugin(socket, { impl: { synchronize: () => ({ update: [{ containerId: "too-early" }], more: true }) } });
    expect(await logs.waitFor((l) => l.startsWith("error:"))).toBe("error: failed to synchronize plugin: plugin does not handle split sync requests");
    await p.closed;
    expect(runtime.plugins).toEqual([]);
  });

  it("refuses a plugin whose Synchronize answer is over the message limit", async () => {
    const { runtime, socket, logs } = await startRuntime({ synchronize: async (sync) => void (await sync([create(PodSandboxSchema, pod)], [])) });
    const p = await scriptedPlugin(socket, {
      impl: { synchronize: () => ({ update: Array.from({ length: 50 }, (_, i) => ({ containerId: `${i}-${"y".repeat(100_000)}` })) }) },
    });
    expect(await logs.waitFor((l) => l.startsWith("error:"))).toBe("error: failed to synchronize plugin: failed to synchronize plugin with split messages");
    await p.closed;
    expect(runtime.plugins).toEqual([]);
  });
});

describe("unsolicited updates", () => {
  it("without an update callback the plugin gets a clear error, not a success", async () => {
    const { runtime, socket } = await startRuntime();
    const p = await scriptedPlugin(socket, {});
    await runtime.waitForPlugins(1);
    const err = await rpcError(p.runtime.updateContainers({ update: [{ containerId: "ctr0" }] }));
    expect([err.code, err.rawMessage]).toEqual([Code.UNIMPLEMENTED, "runtime takes no unsolicited container updates: it has no update callback"]);
  });

  it("go straight to the update callback, even from inside an event handler, without deadlock", async () => {
    const seen: string[] = [];
    const { runtime, socket } = await startRuntime({
      updateContainers: (updates, from) => {
        seen.push(`${from.plugin}:${updates.map((u) => u.containerId).join(",")}:${from.evict.map((e) => e.containerId).join(",")}`);
        return updates.filter((u) => u.containerId === "fails");
      },
    });
    let plugin: Awaited<ReturnType<typeof scriptedPlugin>> | undefined;
    plugin = await scriptedPlugin(socket, {
      idx: "10",
      name: "u",
      impl: {
        createContainer: async () => {
          const res = await plugin!.runtime.updateContainers({ update: [{ containerId: "other" }, { containerId: "fails" }], evict: [{ containerId: "gone" }] });
          return { adjust: { annotations: { failed: res.failed.map((u) => u.containerId).join(",") } } };
        },
      },
    });
    await runtime.waitForPlugins(1);
    const res = await runtime.createContainer({ pod, container });
    expect(res.adjust?.annotations).toEqual({ failed: "fails" });
    expect(seen).toEqual(["10-u:other,fails:gone"]);
  });

  it("an update callback that throws reaches the plugin as its error", async () => {
    const { runtime, socket } = await startRuntime({
      updateContainers: () => {
        throw new Error("cannot update now");
      },
    });
    const p = await scriptedPlugin(socket, {});
    await runtime.waitForPlugins(1);
    const err = await rpcError(p.runtime.updateContainers({ update: [] }));
    expect([err.code, err.rawMessage]).toEqual([Code.UNKNOWN, "cannot update now"]);
  });
});

describe("listening socket", () => {
  it("never exists with a mode wider than asked, not even for a moment", async () => {
    const dir = tempDir();
    const path = join(dir, "nri.sock");
    const seen: number[] = [];
    const watcher = watch(dir, () => {
      try {
        seen.push(lstatSync(path).mode & 0o777);
      } catch {
        // not there (yet)
      }
    });
    cleanups.push(() => watcher.close());
    const previous = process.umask(0);
    try {
      const rt = new NriRuntime({ name: "t", version: "0", socketPath: path, pluginPath: join(dir, "none") });
      await rt.start();
      cleanups.push(() => rt.stop());
    } finally {
      process.umask(previous);
    }
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(seen.every((m) => (m & ~0o600) === 0)).toBe(true);
  });

  it("handles no plugin before start() has resolved, even one that connected while the socket was being set up", async () => {
    const dir = tempDir();
    const path = join(dir, "nri.sock");
    const rt = new NriRuntime({ name: "t", version: "0", socketPath: path, pluginPath: join(dir, "none") });
    cleanups.push(() => rt.stop());
    // The socket is in place before start() has finished setting it up (it still stats it):
    // a plugin connects right then, and start() goes on once the runtime has its connection and
    // the plugin has had 200 turns of the event loop to register, which it would have done in a
    // few were its connection handled at once.
    const accepted = new Promise<void>((resolve) => {
      const connected = (rt as unknown as { connected: (s: unknown) => void }).connected.bind(rt);
      (rt as unknown as { connected: (s: unknown) => void }).connected = (s) => {
        connected(s);
        resolve();
      };
    });
    let registered = false;
    let plugin: Promise<ScriptedPlugin> | undefined;
    const stat = fsp.stat;
    const spy = vi.spyOn(fsp, "stat").mockImplementation(async (p, ...rest) => {
      if (p === path && plugin === undefined) {
        plugin = scriptedPlugin(path, { impl: { runPodSandbox: () => ({}) } });
        void plugin.then(() => (registered = true));
        await accepted;
        for (let turns = 0; !registered && turns < 200; turns++) await new Promise((r) => setImmediate(r));
      }
      return stat(p, ...(rest as []));
    });
    try {
      await rt.start();
    } finally {
      spy.mockRestore();
    }
    expect([plugin !== undefined, registered, rt.plugins.length]).toEqual([true, false, 0]);
    const p = await plugin!;
    await rt.waitForPlugins(1);
    expect(p.calls).toEqual(["Configure", "Synchronize"]);
  });

  it("takes the mode asked for", async () => {
    const { socket } = await startRuntime({ socketMode: 0o660 });
    expect(statSync(socket).mode & 0o777).toBe(0o660);
  });

  it("replaces whatever is at the path, a stale socket or a file, as the reference removes it first", async () => {
    const dir = tempDir();
    const path = join(dir, "nri.sock");
    const stale = createServer();
    await new Promise<void>((r) => stale.listen(path, r));
    // A listener closed without removing its file leaves a stale socket behind.
    (stale as unknown as { _handle: { close(): void } | null })._handle?.close();
    const rt = new NriRuntime({ name: "t", version: "0", socketPath: path, pluginPath: join(dir, "none") });
    await rt.start();
    await rt.stop();
    // stop() removes the socket file, as the reference's listener does.
    expect(() => lstatSync(path)).toThrow(/ENOENT/u);
    writeFileSync(path, "not a socket");
    const again = new NriRuntime({ name: "t", version: "0", socketPath: path, pluginPath: join(dir, "none") });
    await again.start();
    cleanups.push(() => again.stop());
    expect(lstatSync(path).isSocket()).toBe(true);
  });

  it("fails to start with the reference's text when the socket cannot be created", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "file"), "");
    const path = join(dir, "file", "nri.sock");
    const rt = new NriRuntime({ name: "t", version: "0", socketPath: path, pluginPath: join(dir, "none") });
    await expect(rt.start()).rejects.toThrow(`failed to create socket "${path}": mkdir ${join(dir, "file")}: not a directory`);
  });
});
