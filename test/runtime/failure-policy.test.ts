import { afterEach, describe, expect, it } from "vitest";
import type { CallContext } from "../../src/ttrpc/server.js";
import { runCleanups, scriptedPlugin, startRuntime } from "../support/nri-runtime.js";

afterEach(runCleanups);

const pod = { id: "pod0" };
const container = { id: "ctr0", podSandboxId: "pod0" };

/** A handler that answers only after the call's deadline has passed (its answer is dropped). */
function tooLate(ctx: CallContext): Promise<object> {
  return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({}), { once: true }));
}

const TIMEOUT_TEXT = "plugin 10-slow failed to handle CreateContainer request: context deadline exceeded";

describe("failure policy with a plugin that times out", () => {
  // {fail_request, keep_connected} -> does the event fail, does the plugin stay
  const matrix = [
    [false, false, "proceeds", "dropped"],
    [true, false, "fails", "dropped"],
    [false, true, "proceeds", "kept"],
    [true, true, "fails", "kept"],
  ] as const;

  it.each(matrix)("fail_request=%s keep_connected=%s: the event %s and the plugin is %s", async (failRequest, keepConnected, outcome, fate) => {
    const { runtime, socket, logs } = await startRuntime({ requestTimeoutMs: 150 });
    let slowCalls = 0;
    await scriptedPlugin(socket, {
      idx: "10",
      name: "slow",
      configure: { failurePolicy: { failRequest, keepConnected } },
      impl: {
        createContainer: (_req, ctx) => {
          slowCalls++;
          return tooLate(ctx);
        },
      },
    });
    const next: string[] = [];
    await scriptedPlugin(socket, {
      idx: "20",
      name: "next",
      impl: {
        createContainer: (req) => {
          next.push(req.container?.id ?? "");
          return { adjust: { annotations: { next: "yes" } } };
        },
      },
    });
    await runtime.waitForPlugins(2);

    const first = runtime.createContainer({ pod, container });
    if (outcome === "fails") {
      await expect(first).rejects.toThrow(TIMEOUT_TEXT);
      expect(next).toEqual([]);
    } else {
      expect((await first).adjust?.annotations).toEqual({ next: "yes" });
      expect(next).toEqual(["ctr0"]);
      expect(logs.at("warn")).toContain("plugin 10-slow failed to handle CreateContainer request, proceeding without it: context deadline exceeded");
    }
    expect(runtime.plugins.map((p) => p.id)).toEqual(fate === "kept" ? ["10-slow", "20-next"] : ["20-next"]);
    if (fate === "dropped") expect(logs.at("error")).toContain("closing plugin 10-slow, failed to handle CreateContainer request: context deadline exceeded");

    // A kept plugin gets later events; a dropped one never again.
    await runtime.createContainer({ pod, container: { id: "ctr1" } }).catch(() => undefined);
    expect(slowCalls).toBe(fate === "kept" ? 2 : 1);
  });

  it("an error the plugin answers with fails the event unchanged and the plugin stays, whatever its policy", async () => {
    const { runtime, socket } = await startRuntime();
    await scriptedPlugin(socket, {
      idx: "10",
      name: "boom",
      configure: { failurePolicy: { failRequest: false } },
      impl: {
        runPodSandbox: () => {
          throw new Error("boom");
        },
      },
    });
    let later = 0;
    await scriptedPlugin(socket, { idx: "20", name: "later", impl: { runPodSandbox: () => (later++, {}) } });
    await runtime.waitForPlugins(2);
    await expect(runtime.runPodSandbox({ pod })).rejects.toThrow(/^rpc error: code = Unknown desc = boom$/u);
    expect(later).toBe(0);
    expect(runtime.plugins.map((p) => p.id)).toEqual(["10-boom", "20-later"]);
  });

  it("a canceled event ends the call in flight with Go's canceled context and keeps the plugin", async () => {
    const { runtime, socket } = await startRuntime({ requestTimeoutMs: 10_000 });
    const abort = new AbortController();
    let calls = 0;
    await scriptedPlugin(socket, {
      idx: "10",
      name: "slow",
      configure: { failurePolicy: { failRequest: false, keepConnected: false } },
      impl: {
        createContainer: (_req, ctx) => {
          if (calls++ === 0) abort.abort(new Error("event canceled by the caller"));
          return tooLate(ctx);
        },
        startContainer: () => (calls++, {}),
      },
    });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container }, { signal: abort.signal })).rejects.toThrow(/^context canceled$/u);
    expect(runtime.plugins.map((p) => p.id)).toEqual(["10-slow"]);
    await runtime.startContainer({ pod, container });
    expect(calls).toBe(2);
  });

  it("a plugin whose connection closed between events is skipped silently, even with fail_request", async () => {
    const { runtime, socket, logs } = await startRuntime();
    const gone = await scriptedPlugin(socket, { idx: "10", name: "gone", configure: { failurePolicy: { failRequest: true } } });
    let reached = 0;
    await scriptedPlugin(socket, { idx: "20", name: "here", impl: { startContainer: () => (reached++, {}) } });
    await runtime.waitForPlugins(2);
    gone.mux.close();
    await logs.waitFor((l) => l === 'info: connection to plugin "10-gone" closed');
    await runtime.startContainer({ pod, container });
    expect(reached).toBe(1);
    expect(runtime.plugins.map((p) => p.id)).toEqual(["20-here"]);
  });

  it("a plugin whose connection is lost during an event is a fatal failure: proceeds without it by default", async () => {
    const { runtime, socket } = await startRuntime();
    let dying: Awaited<ReturnType<typeof scriptedPlugin>> | undefined;
    dying = await scriptedPlugin(socket, {
      idx: "10",
      name: "dying",
      impl: {
        removeContainer: () => {
          setImmediate(() => dying!.mux.close());
          return new Promise(() => undefined);
        },
      },
    });
    await runtime.waitForPlugins(1);
    await runtime.removeContainer({ pod, container });
    expect(runtime.plugins).toEqual([]);
  });

  it("and fails the event with the reference's text when the policy says fail_request", async () => {
    const { runtime, socket } = await startRuntime();
    let dying: Awaited<ReturnType<typeof scriptedPlugin>> | undefined;
    dying = await scriptedPlugin(socket, {
      idx: "10",
      name: "dying",
      configure: { failurePolicy: { failRequest: true, keepConnected: true } },
      impl: {
        removeContainer: () => {
          setImmediate(() => dying!.mux.close());
          return new Promise(() => undefined);
        },
      },
    });
    await runtime.waitForPlugins(1);
    await expect(runtime.removeContainer({ pod, container })).rejects.toThrow(/^plugin 10-dying failed to handle RemoveContainer request: ttrpc: closed$/u);
    // A lost connection drops the plugin even with keep_connected.
    expect(runtime.plugins).toEqual([]);
  });
});

describe("validators", () => {
  it("a validator's error fails the event whatever its policy, with the reference's text", async () => {
    const { runtime, socket } = await startRuntime();
    await scriptedPlugin(socket, {
      idx: "90",
      name: "v",
      configure: { events: 1 << 13, failurePolicy: { failRequest: false } },
      impl: {
        validateContainerAdjustment: () => {
          throw new Error("cannot decide");
        },
      },
    });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(/^validator plugin 90-v failed: rpc error: code = Unknown desc = cannot decide$/u);
    expect(runtime.plugins.map((p) => p.id)).toEqual(["90-v"]);
  });

  it.each([
    [false, "dropped"],
    [true, "kept"],
  ] as const)("a validator timing out fails the event (keep_connected=%s: %s)", async (keepConnected, fate) => {
    const { runtime, socket } = await startRuntime({ requestTimeoutMs: 150 });
    await scriptedPlugin(socket, {
      idx: "90",
      name: "v",
      configure: { events: 1 << 13, failurePolicy: { keepConnected } },
      impl: { validateContainerAdjustment: (_req, ctx) => tooLate(ctx) },
    });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(/^validator plugin 90-v failed: context deadline exceeded$/u);
    expect(runtime.plugins.map((p) => p.id)).toEqual(fate === "kept" ? ["90-v"] : []);
  });

  it("a rejection reads as the reference's, an empty reason as unknown", async () => {
    const { runtime, socket } = await startRuntime();
    let reason = "too much memory";
    await scriptedPlugin(socket, { idx: "90", name: "v", configure: { events: 1 << 13 }, impl: { validateContainerAdjustment: () => ({ reject: true, reason }) } });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(/^validator "90-v" rejected container adjustment, reason: too much memory$/u);
    reason = "";
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(/^validator "90-v" rejected container adjustment, reason: unknown rejection reason$/u);
  });
});

describe("teardown", () => {
  const stopping = async (teardownErrors: "fail" | "continue") => {
    const { runtime, socket, logs } = await startRuntime({ teardownErrors });
    const reached: string[] = [];
    for (const [idx, fails] of [["10", true], ["20", false]] as const) {
      await scriptedPlugin(socket, {
        idx,
        name: "t",
        impl: {
          stopPodSandbox: () => {
            reached.push(idx);
            if (fails) throw new Error("cannot stop");
            return {};
          },
          runPodSandbox: () => {
            reached.push(idx);
            if (fails) throw new Error("cannot run");
            return {};
          },
        },
      });
    }
    await runtime.waitForPlugins(2);
    return { runtime, reached, logs };
  };

  it("by default a plugin error stops StopPodSandbox, as containerd/nri v0.12.5 does", async () => {
    const { runtime, reached } = await stopping("fail");
    await expect(runtime.stopPodSandbox({ pod })).rejects.toThrow(/^rpc error: code = Unknown desc = cannot stop$/u);
    expect(reached).toEqual(["10"]);
  });

  it('with teardownErrors "continue" StopPodSandbox reaches every plugin and succeeds; other events still stop', async () => {
    const { runtime, reached, logs } = await stopping("continue");
    await runtime.stopPodSandbox({ pod });
    expect(reached).toEqual(["10", "20"]);
    expect(logs.at("warn")).toContain("plugin 10-t failed StopPodSandbox, teardown goes on: rpc error: code = Unknown desc = cannot stop");
    reached.length = 0;
    await expect(runtime.runPodSandbox({ pod })).rejects.toThrow("rpc error: code = Unknown desc = cannot run");
    expect(reached).toEqual(["10"]);
  });
});

