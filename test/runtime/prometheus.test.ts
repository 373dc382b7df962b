import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { type BuiltinPlugin, EventError, NriRuntime } from "../../src/runtime/index.js";
import { expectRejection } from "../support/errors.js";
import { cleanups, runCleanups } from "../support/nri-runtime.js";
import { tempDir } from "../support/temp.js";

afterEach(runCleanups);

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const pod = { id: "pod0" };
const container = { id: "ctr0", podSandboxId: "pod0" };

async function inProcess(builtinPlugins: BuiltinPlugin[], registry: Registry, prefix?: string): Promise<NriRuntime> {
  const runtime = new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath: tempDir(), builtinPlugins, log: quiet, requestTimeoutMs: 50, prometheus: { registry: registry as never, ...(prefix === undefined ? {} : { prefix }) } });
  cleanups.push(() => runtime.stop());
  await runtime.start();
  return runtime;
}

/** The samples of `registry` with a value, without HELP, TYPE, histogram buckets and sums. */
async function samples(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split("\n").filter((l) => l !== "" && !l.startsWith("#") && !l.includes("_bucket{") && !l.includes("_sum{"));
}

describe("runtime prometheus metrics", () => {
  it("are containerd's four with its labels, and timeouts, drops, validation refusals and merge conflicts", async () => {
    const registry = new Registry();
    const runtime = await inProcess(
      [
        { idx: "10", name: "a", handlers: { createContainer: () => ({ adjust: { annotations: { k: "a" } }, update: [{ containerId: "x" }, { containerId: "y" }] }), runPodSandbox: () => Promise.reject(new Error("boom")) } },
        { idx: "20", name: "b", handlers: { createContainer: (req) => ({ adjust: { annotations: { [req.container!.name === "clash" ? "k" : "j"]: "b" } } }), updateContainer: () => ({ evict: [{ containerId: "z" }] }) } },
        { idx: "30", name: "v", handlers: { validateContainerAdjustment: (req) => { if (req.container?.name === "refused") throw new Error("not this one"); } } },
        { idx: "40", name: "slow", handlers: { stopPodSandbox: (_req, ctx) => new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason as Error))) } },
      ],
      registry,
      "containerd_nri",
    );
    await expectRejection(EventError, runtime.runPodSandbox({ pod }));
    await expectRejection(Error, runtime.createContainer({ pod, container: { ...container, name: "clash" } }));
    await expectRejection(Error, runtime.createContainer({ pod, container: { ...container, name: "refused" } }));
    await runtime.updateContainer({ pod, container });
    await runtime.stopPodSandbox({ pod });
    const s = await samples(registry);
    expect(s.filter((l) => l.startsWith("containerd_nri_plugin_invocations_total{") && !l.includes("Synchronize"))).toEqual([
      'containerd_nri_plugin_invocations_total{plugin="10-a",operation="RunPodSandbox",status="error",error="other"} 1',
      'containerd_nri_plugin_invocations_total{plugin="10-a",operation="CreateContainer",status="success",error=""} 2',
      'containerd_nri_plugin_invocations_total{plugin="20-b",operation="CreateContainer",status="success",error=""} 2',
      'containerd_nri_plugin_invocations_total{plugin="30-v",operation="ValidateContainerAdjustment",status="success",error=""} 1',
      'containerd_nri_plugin_invocations_total{plugin="20-b",operation="UpdateContainer",status="success",error=""} 1',
      'containerd_nri_plugin_invocations_total{plugin="40-slow",operation="StopPodSandbox",status="error",error="deadline_exceeded"} 1',
    ]);
    expect(s.filter((l) => !l.includes("invocations_total") && !l.includes("latency_seconds_count"))).toEqual([
      'containerd_nri_plugin_adjustments_total{plugin="10-a",operation="CreateContainer",type="update"} 4',
      'containerd_nri_plugin_adjustments_total{plugin="20-b",operation="UpdateContainer",type="evict"} 1',
      'containerd_nri_plugin_timeouts_total{plugin="40-slow",operation="StopPodSandbox"} 1',
      'containerd_nri_plugin_drops_total{plugin="40-slow",operation="StopPodSandbox"} 1',
      'containerd_nri_validation_refusals_total{plugin="30-v"} 1',
      'containerd_nri_merge_conflicts_total{plugin="20-b",operation="CreateContainer"} 1',
      "containerd_nri_active_plugins 3",
    ]);
    expect(s).toContain('containerd_nri_plugin_latency_seconds_count{plugin="40-slow",operation="StopPodSandbox"} 1');
  });

  it("label an error status with its code, as containerd does", async () => {
    const { errorLabel } = await import("../../src/runtime/prometheus.js");
    const { PluginCallError } = await import("../../src/runtime/errors.js");
    const { RpcError, Code } = await import("../../src/runtime/index.js");
    expect(errorLabel(PluginCallError.fromStatus(new RpcError(Code.INVALID_ARGUMENT, "x")))).toBe("invalid_argument");
    expect(errorLabel(new PluginCallError("context canceled", "canceled"))).toBe("canceled");
    expect(errorLabel(new PluginCallError("ttrpc: closed", "closed"))).toBe("other");
  });
});
