import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { eventsToMask, parseEvent } from "../../src/api/events.js";
import { NriPlugin } from "../../src/plugin/index.js";
import { translation } from "../../src/plugin/methods.js";
import { WARM_UP_CALLS, warmUp } from "../../src/plugin/warm-up.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { Server } from "../../src/ttrpc/server.js";
import { socketPath } from "../support/socket.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

/** A server that records each call it gets, by `service/method`, with its request's size. */
function recordingServer(calls: string[]): Server {
  const server = new Server();
  const methods = (service: string) =>
    new Proxy(
      {},
      {
        get: (_, method: string) => ({ kind: "unary", handler: (req: Uint8Array) => (calls.push(`${service}/${method} ${req.length > 1000 ? "sample" : "small"}`), new Uint8Array(0)) }),
        has: () => true,
        ownKeys: () => ["RunPodSandbox", "CreateContainer", "StartContainer", "StopContainer"],
        getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
      },
    );
  server.register("nri.pkg.api.v1beta1.Plugin", methods("v1beta1"));
  server.register("nri.pkg.api.v1alpha1.Plugin", methods("v1alpha1"));
  return server;
}

describe("a plugin's warm-up", () => {
  it("serves sample requests of the subscribed events, round after round, through the plugin's serving path", async () => {
    const calls: string[] = [];
    const server = recordingServer(calls);
    await warmUp({
      serve: (conn) => void server.serve(conn),
      events: eventsToMask([parseEvent("CreateContainer"), parseEvent("StartContainer")]),
      revision: "v1beta1",
      open: () => true,
    });
    expect(calls).toHaveLength(WARM_UP_CALLS);
    expect(calls.slice(0, 4)).toEqual(["v1beta1/CreateContainer sample", "v1beta1/StartContainer sample", "v1beta1/CreateContainer sample", "v1beta1/StartContainer sample"]);
    expect(new Set(calls)).toEqual(new Set(["v1beta1/CreateContainer sample", "v1beta1/StartContainer sample"]));
  });

  it("speaks the runtime's revision: a v1alpha1 runtime's plugin gets dedicated v1alpha1 calls", async () => {
    await translation();
    const calls: string[] = [];
    const server = recordingServer(calls);
    await warmUp({ serve: (conn) => void server.serve(conn), events: eventsToMask([parseEvent("StopContainer")]), revision: "v1alpha1", open: () => true });
    expect(new Set(calls)).toEqual(new Set(["v1alpha1/StopContainer sample"]));
  });

  it("stops once the plugin's connection has ended, and makes no call for a plugin without events", async () => {
    const calls: string[] = [];
    const server = recordingServer(calls);
    await warmUp({ serve: (conn) => void server.serve(conn), events: eventsToMask([parseEvent("RunPodSandbox")]), revision: "v1beta1", open: () => calls.length < 5 });
    expect(calls).toHaveLength(5);
    calls.length = 0;
    await warmUp({ serve: (conn) => void server.serve(conn), events: 0, revision: "v1beta1", open: () => true });
    expect(calls).toEqual([]);
  });

  it("never calls the plugin's handlers nor its interceptors: only real events reach them, and they are served while it runs", async () => {
    const path = socketPath();
    const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", warmUp: false });
    await rt.start();
    cleanup.push(() => void rt.stop());
    const seen: string[] = [];
    const intercepted: string[] = [];
    const p = new NriPlugin(
      { createContainer: (req) => void seen.push(`create ${req.container?.id}`), startContainer: () => void seen.push("start") },
      { socketPath: path, idx: "10", name: "p", env: {}, warmUp: true, interceptors: [(next) => (call) => (intercepted.push(call.method), next(call))] },
    );
    cleanup.push(() => p.close());
    await p.start();
    await rt.waitForPlugins(1);
    let warmed = false;
    void p.warmedUp.then(() => (warmed = true));
    // A real event while the warm-up runs is served at once, by the plugin's own handler.
    await rt.createContainer({ pod: { id: "pod" }, container: { id: "real" } });
    expect(warmed).toBe(false);
    await p.warmedUp;
    expect(seen).toEqual(["create real"]);
    expect(intercepted).toEqual(["configure", "synchronize", "createContainer"]);
  });

  it("is off unless asked (warmUp: true): warmedUp settles at once", async () => {
    const path = socketPath();
    const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", warmUp: false });
    await rt.start();
    cleanup.push(() => void rt.stop());
    const on = new NriPlugin({ createContainer: () => undefined }, { socketPath: path, idx: "10", name: "on", env: {}, warmUp: true });
    const off = new NriPlugin({ createContainer: () => undefined }, { socketPath: path, idx: "11", name: "off", env: {}, warmUp: false });
    const unset = new NriPlugin({ createContainer: () => undefined }, { socketPath: path, idx: "12", name: "unset", env: {} });
    cleanup.push(() => on.close(), () => off.close(), () => unset.close());
    await Promise.all([on.start(), off.start(), unset.start()]);
    const settled: string[] = [];
    void on.warmedUp.then(() => settled.push("on"));
    void off.warmedUp.then(() => settled.push("off"));
    void unset.warmedUp.then(() => settled.push("unset"));
    // The warm-up takes a turn of the event loop per call: one turn is too few for it, not for a settled promise.
    await nextTurn();
    expect(settled).toEqual(["off", "unset"]);
  });
});
