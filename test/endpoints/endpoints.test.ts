import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Mux } from "../../src/mux/mux.js";
import { NriPlugin, type PluginHandlers } from "../../src/plugin/index.js";
import { NriRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import { Client } from "../../src/ttrpc/client.js";
import { Server } from "../../src/ttrpc/server.js";
import { decodeRequest, decodeResponse } from "../../src/ttrpc/envelope.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { SUSTAINED_MS, processPollWindow } from "../../src/internal/busy-poll.js";
import { socketPath } from "../support/socket.js";
import { holdPollClock } from "../support/poll-clock.js";
import { eventually } from "../support/wait.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

async function startRuntime(extra: Partial<RuntimeOptions> = {}): Promise<NriRuntime> {
  const path = socketPath();
  const rt = new NriRuntime({ socketPath: path, pluginPath: join(path, "../none"), name: "test-runtime", version: "0", ...extra });
  await rt.start();
  cleanup.push(() => void rt.stop());
  return rt;
}

async function startPlugin(rt: NriRuntime, handlers: PluginHandlers, idx = "10", name = "p", extra: Partial<ConstructorParameters<typeof NriPlugin>[1]> = {}): Promise<NriPlugin> {
  const p = new NriPlugin(handlers, { socketPath: rt.socketPath!, idx, name, env: {}, ...extra });
  await p.start();
  cleanup.push(() => p.close());
  return p;
}

const pod = { id: "pod1" };

describe("plugin endpoint", () => {
  it("subscribes to exactly the events it has handlers for", async () => {
    const { eventsOf } = await import("../../src/plugin/index.js");
    expect(eventsOf({ runPodSandbox: () => undefined, stopContainer: () => undefined, configure: () => undefined })).toBe((1 << 0) | (1 << 9));
    const rt = await startRuntime();
    const got: string[] = [];
    await startPlugin(rt, { postUpdatePodSandbox: () => void got.push("PostUpdatePodSandbox"), runPodSandbox: () => void got.push("RunPodSandbox") });
    await rt.waitForPlugins(1);
    expect(rt.plugins[0]!.events).toBe((1 << 0) | (1 << 12));
    // An event the plugin did not subscribe to is not delivered.
    await rt.stopPodSandbox({ pod });
    await rt.runPodSandbox({ pod });
    expect(got).toEqual(["RunPodSandbox"]);
  });

  it("busy polls by default only for events back to back, never for events spaced apart or with busyPollMicros 0, and refuses a bad value", async () => {
    // The poller's clock is the test's (events take no poller time; the test steps it between
    // them), so what polls depends on the spacing alone, not on this machine's speed.
    const clock = holdPollClock();
    cleanup.push(() => clock.restore());
    const step = 0.125;
    /** Turns the event loop took while polling over 20 events 2 ms apart, then the events back to back (`step` apart) until one polled, at most 400. */
    const turns = async (micros: Partial<{ busyPollMicros: number }>): Promise<{ spaced: number; backToBack: number; events: number }> => {
      // No warm-up: its calls, between the test's, would break the runs of messages polling needs.
      const rt = await startRuntime({ ...micros, warmUp: false });
      await startPlugin(rt, { runPodSandbox: () => undefined }, "10", "p", { ...micros, warmUp: false });
      await rt.waitForPlugins(1);
      clock.advance(2);
      await eventually(() => !processPollWindow.active, "no window open before the events");
      const before = processPollWindow.turns;
      for (let i = 0; i < 20; i++) {
        await rt.runPodSandbox({ pod });
        clock.advance(2);
      }
      const spaced = processPollWindow.turns - before;
      let events = 0;
      while (processPollWindow.turns === before + spaced && events < 400) {
        await rt.runPodSandbox({ pod });
        events++;
        clock.advance(step);
      }
      const backToBack = processPollWindow.turns - before - spaced;
      // Let the window pass before the next runtime.
      clock.advance(20);
      await eventually(() => !processPollWindow.active, "the window to end");
      return { spaced, backToBack, events };
    };
    const byDefault = await turns({});
    expect(byDefault.spaced).toBe(0);
    expect(byDefault.backToBack).toBeGreaterThan(0);
    // The run begins with the first event back to back; the first write SUSTAINED_MS after it polls.
    expect(byDefault.events).toBe(SUSTAINED_MS / step + 1);
    expect(await turns({ busyPollMicros: 0 })).toEqual({ spaced: 0, backToBack: 0, events: 400 });
    const id = { name: "p", idx: "10" };
    expect([new NriPlugin({}, id).busyPollMicros, new NriPlugin({}, { ...id, busyPollMicros: 0 }).busyPollMicros]).toEqual([100, 0]);
    expect(() => new NriPlugin({}, { busyPollMicros: -1 })).toThrow("nri: busyPollMicros -1 is not an integer from 0 to 10000");
    expect(() => new NriRuntime({ name: "r", version: "0", busyPollMicros: 20_000 })).toThrow("nri: busyPollMicros 20000 is not an integer from 0 to 10000");
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
    // The child starts under tsx with a cold cache (the run's own TMPDIR): no registration
    // deadline this machine's speed could beat.
    const rt = await startRuntime({ registrationTimeoutMs: 300_000 });
    const sock = connect(rt.socketPath!);
    // Paused before it connects, this process never reads the connection: every byte the runtime
    // sends goes to the child that inherits it (else the two race for the first request).
    sock.pause();
    await new Promise((r) => sock.once("connect", r));
    const child = spawn(process.execPath, ["--import", "tsx", resolve(import.meta.dirname, "../../src/cli/main.ts"), "example-plugin"], {
      stdio: ["ignore", "pipe", "pipe", sock],
      env: { ...process.env, NRI_PLUGIN_SOCKET: "3", NRI_PLUGIN_NAME: "inherited", NRI_PLUGIN_IDX: "07" },
    });
    cleanup.push(() => child.kill());
    await rt.waitForPlugins(1, 300_000);
    sock.destroy();
    expect(rt.plugins.map((p) => [p.id, p.revision])).toEqual([["07-inherited", "v1beta1"]]);
  }, 330_000);

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

