import { afterEach, describe, expect, it } from "vitest";
import type { CallContext } from "../../src/ttrpc/server.js";
import { exactly } from "../support/errors.js";
import { goText } from "../support/go-texts.js";
import { runCleanups, scriptedPlugin, startRuntime } from "../support/nri-runtime.js";

afterEach(runCleanups);

const pod = { id: "pod0" };
const container = { id: "ctr0", podSandboxId: "pod0" };

/** A handler that answers only after the call's deadline has passed (its answer is dropped). */
function tooLate(ctx: CallContext): Promise<object> {
  return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({}), { once: true }));
}

// Go's texts, recorded from the Go runtime on the differential scenarios (test/interop/go-texts.ts).
const TIMEOUT_TEXT = goText("event: a plugin timed out, fail_request");

/**
 * The request timeout where a plugin times out: every healthy call (registration, the other
 * plugins' answers) must fit in it on a loaded machine, and each timeout costs it in full.
 */
const REQUEST_TIMEOUT_MS = 2000;

describe("failure policy with a plugin that times out", () => {
  // {fail_request, keep_connected} -> does the event fail, does the plugin stay
  const matrix = [
    [false, false, "proceeds", "dropped"],
    [true, false, "fails", "dropped"],
    [false, true, "proceeds", "kept"],
    [true, true, "fails", "kept"],
  ] as const;

  it.each(matrix)("fail_request=%s keep_connected=%s: the event %s and the plugin is %s", async (failRequest, keepConnected, outcome, fate) => {
    const { runtime, socket, logs } = await startRuntime({ requestTimeoutMs: REQUEST_TIMEOUT_MS });
    let slowCalls = 0;
    await scriptedPlugin(socket, {
      idx: "10",
      name: "slow",
      configure: { failurePolicy: { failRequest, keepConnected } },
      impl: {
        // Only the first call times out: a kept plugin's second answer costs no timeout.
        createContainer: (_req, ctx) => (slowCalls++ === 0 ? tooLate(ctx) : {}),
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
      await expect(first).rejects.toThrow(exactly(TIMEOUT_TEXT));
      expect(next).toEqual([]);
    } else {
      expect((await first).adjust?.annotations).toEqual({ next: "yes" });
      expect(next).toEqual(["ctr0"]);
      expect(logs.at("warn")).toContain(goText("warn: a plugin timed out, proceeding"));
    }
    expect(runtime.plugins.map((p) => p.id)).toEqual(fate === "kept" ? ["10-slow", "20-next"] : ["20-next"]);
    if (fate === "dropped") expect(logs.at("error")).toContain(goText("error: a plugin timed out, closing it"));

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
          throw new Error("nope");
        },
      },
    });
    let later = 0;
    await scriptedPlugin(socket, { idx: "20", name: "later", impl: { runPodSandbox: () => (later++, {}) } });
    await runtime.waitForPlugins(2);
    await expect(runtime.runPodSandbox({ pod })).rejects.toThrow(exactly(goText("event: a plugin's error")));
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
    await expect(runtime.createContainer({ pod, container }, { signal: abort.signal })).rejects.toThrow(exactly(goText("go: canceled")));
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
    await logs.waitFor((l) => l === `info: ${goText("info: a plugin's connection closed")}`);
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
    // As the differential scenario plugin-exits-during-event has it, for Go's text.
    dying = await scriptedPlugin(socket, {
      idx: "20",
      name: "strict",
      configure: { failurePolicy: { failRequest: true, keepConnected: true } },
      impl: {
        createContainer: () => {
          setImmediate(() => dying!.mux.close());
          return new Promise(() => undefined);
        },
      },
    });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(exactly(goText("event: a connection lost during the event, fail_request")));
    // A lost connection drops the plugin even with keep_connected.
    expect(runtime.plugins).toEqual([]);
  });
});

describe("validators", () => {
  it("a validator's error fails the event whatever its policy, with the reference's text", async () => {
    const { runtime, socket } = await startRuntime();
    // Named and failing as in the differential scenario "validators", for Go's text.
    await scriptedPlugin(socket, {
      idx: "80",
      name: "v1",
      configure: { events: 1 << 13, failurePolicy: { failRequest: false } },
      impl: {
        validateContainerAdjustment: () => {
          throw new Error("broken");
        },
      },
    });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(exactly(goText("event: a validator's error")));
    expect(runtime.plugins.map((p) => p.id)).toEqual(["80-v1"]);
  });

  // Named as in the differential scenario "validator-failure-policy", for Go's texts.
  it.each([
    [false, "dropped", "90", "drop", "event: a validator timed out"],
    [true, "kept", "80", "keep", "event: a validator timed out, keep_connected"],
  ] as const)("a validator timing out fails the event (keep_connected=%s: %s)", async (keepConnected, fate, idx, name, text) => {
    const { runtime, socket } = await startRuntime({ requestTimeoutMs: REQUEST_TIMEOUT_MS });
    await scriptedPlugin(socket, {
      idx,
      name,
      configure: { events: 1 << 13, failurePolicy: { keepConnected } },
      impl: { validateContainerAdjustment: (_req, ctx) => tooLate(ctx) },
    });
    await runtime.waitForPlugins(1);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(exactly(goText(text)));
    expect(runtime.plugins.map((p) => p.id)).toEqual(fate === "kept" ? [`${idx}-${name}`] : []);
  });

  it("a rejection reads as the reference's, an empty reason as unknown", async () => {
    // The validators of the differential scenario "validators", for Go's texts: 80-v1 rejects
    // the first container with "no way", 90-v2 the second with no reason.
    const { runtime, socket } = await startRuntime();
    let call = 0;
    const verdict = (mine: number, reason: string) => () => (call === mine ? { reject: true, reason } : {});
    await scriptedPlugin(socket, { idx: "80", name: "v1", configure: { events: 1 << 13 }, impl: { validateContainerAdjustment: verdict(1, "no way") } });
    await scriptedPlugin(socket, { idx: "90", name: "v2", configure: { events: 1 << 13 }, impl: { validateContainerAdjustment: verdict(2, "") } });
    await runtime.waitForPlugins(2);
    call = 1;
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(exactly(goText("event: a validator rejected")));
    call = 2;
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(exactly(goText("event: a validator rejected without a reason")));
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
            if (fails) throw new Error("nope");
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
    await expect(runtime.stopPodSandbox({ pod })).rejects.toThrow(exactly(goText("event: a plugin's error on StopPodSandbox")));
    expect(reached).toEqual(["10"]);
  });

  it('with teardownErrors "continue" StopPodSandbox reaches every plugin and succeeds; other events still stop', async () => {
    const { runtime, reached, logs } = await stopping("continue");
    await runtime.stopPodSandbox({ pod });
    expect(reached).toEqual(["10", "20"]);
    // nri-wire's own warning (Go has no teardownErrors), ending with Go's text of the error.
    expect(logs.at("warn")).toContain(`plugin 10-t failed StopPodSandbox, teardown goes on: ${goText("event: a plugin's error on StopPodSandbox")}`);
    reached.length = 0;
    await expect(runtime.runPodSandbox({ pod })).rejects.toThrow(exactly(goText("event: a plugin's error")));
    expect(reached).toEqual(["10"]);
  });
});

