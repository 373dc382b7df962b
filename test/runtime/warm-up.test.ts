import { afterEach, describe, expect, it } from "vitest";
import { NriPlugin } from "../../src/plugin/index.js";
import { WARM_UP_EVENTS, warmUpRuntime } from "../../src/runtime/warm-up.js";
import type { EventMethod } from "../../src/runtime/runtime-plugin.js";
import { startRuntime } from "../support/nri-runtime.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

describe("a runtime's warm-up", () => {
  it("relays a pod's whole life, round after round, on the private runtime it is given, and stops it", async () => {
    const relayed: EventMethod[] = [];
    const requests: unknown[] = [];
    let accepted = 0;
    let stopped = 0;
    await warmUpRuntime({
      accept: () => void accepted++,
      waitForPlugin: async () => undefined,
      relay: async (method, request) => {
        relayed.push(method);
        requests.push(request);
      },
      stop: async () => void stopped++,
      running: () => true,
    });
    expect([accepted, stopped, relayed.length]).toEqual([1, 1, WARM_UP_EVENTS]);
    expect(relayed.slice(0, 13)).toEqual([
      "runPodSandbox",
      "createContainer",
      "postCreateContainer",
      "startContainer",
      "postStartContainer",
      "updateContainer",
      "postUpdateContainer",
      "updatePodSandbox",
      "postUpdatePodSandbox",
      "stopContainer",
      "removeContainer",
      "stopPodSandbox",
      "removePodSandbox",
    ]);
    // The sample pod and container, the same every round.
    expect(requests[1]).toMatchObject({ pod: { namespace: "sample" }, container: { name: "server" } });
    expect(requests[14]).toBe(requests[1]);
  });

  it("stops once the runtime stops, and stops its private runtime even when that fails", async () => {
    let n = 0;
    let stopped = false;
    await warmUpRuntime({
      accept: () => undefined,
      waitForPlugin: async () => undefined,
      relay: async () => {
        if (++n === 3) throw new Error("relay failed");
      },
      stop: async () => void (stopped = true),
      running: () => true,
    });
    expect([n, stopped]).toEqual([3, true]);
    n = 0;
    await warmUpRuntime({ accept: () => undefined, waitForPlugin: async () => undefined, relay: async () => void n++, stop: async () => undefined, running: () => n < 7 });
    expect(n).toBe(7);
  });

  it("never reaches the runtime's plugins or its synchronize callback; its events go to a sample plugin of its own", async () => {
    let syncs = 0;
    const { runtime, socket } = await startRuntime({
      warmUp: true,
      synchronize: async (sync) => {
        syncs++;
        await sync([], []);
      },
    });
    cleanup.push(() => void runtime.stop());
    const seen: string[] = [];
    const p = new NriPlugin(
      { runPodSandbox: () => void seen.push("run"), createContainer: (req) => void seen.push(`create ${req.container?.id}`), removePodSandbox: () => void seen.push("remove") },
      { socketPath: socket, idx: "10", name: "p", env: {}, warmUp: false },
    );
    cleanup.push(() => p.close());
    await p.start();
    await runtime.waitForPlugins(1);
    const res = await runtime.createContainer({ pod: { id: "pod" }, container: { id: "real" } });
    await runtime.warmedUp;
    expect(seen).toEqual(["create real"]);
    expect(res.adjust?.annotations ?? {}).toEqual({});
    expect(runtime.plugins.map((x) => x.id)).toEqual(["10-p"]);
    // Once for start(), once for the plugin: none for the sample plugin.
    expect(syncs).toBe(2);
  });
});
