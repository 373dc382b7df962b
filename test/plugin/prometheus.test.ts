import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { NriPlugin, type PluginHandlers } from "../../src/plugin/index.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { socketPath } from "../support/socket.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const pod = { id: "pod-1", namespace: "default" };
const container = { id: "ctr-1", podSandboxId: "pod-1" };

async function runtime(path = socketPath()): Promise<NriRuntime> {
  const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1.2", log: quiet });
  await rt.start();
  cleanup.push(() => rt.stop());
  return rt;
}

async function plugin(rt: NriRuntime, handlers: PluginHandlers, registry: Registry): Promise<NriPlugin> {
  const p = new NriPlugin(handlers, { idx: "10", name: "p", env: {}, socketPath: rt.socketPath!, prometheus: { registry: registry as never }, log: quiet });
  cleanup.push(() => p.close());
  await p.start();
  await rt.waitForPlugins(1);
  return p;
}

/** The samples of `registry` without HELP, TYPE and histogram buckets, `_sum` as `>0`. */
async function samples(registry: Registry): Promise<string[]> {
  return (await registry.metrics())
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#") && !l.includes("_bucket{"))
    .map((l) => (l.includes("_sum{") ? l.replace(/ [0-9.e-]+$/u, " >0") : l));
}

describe("plugin prometheus metrics", () => {
  it("count calls by method and outcome, time them, and show the connection and the runtime", async () => {
    const registry = new Registry();
    const rt = await runtime();
    await plugin(rt, { createContainer: () => ({}), runPodSandbox: () => Promise.reject(new Error("nope")) }, registry);
    await rt.createContainer({ pod, container });
    await expect(rt.runPodSandbox({ pod })).rejects.toThrow("nope");
    expect(await samples(registry)).toEqual([
      'nri_plugin_events_total{plugin="10-p",method="Configure",outcome="success"} 1',
      'nri_plugin_events_total{plugin="10-p",method="Synchronize",outcome="success"} 1',
      'nri_plugin_events_total{plugin="10-p",method="CreateContainer",outcome="success"} 1',
      'nri_plugin_events_total{plugin="10-p",method="RunPodSandbox",outcome="unknown"} 1',
      'nri_plugin_handler_duration_seconds_sum{plugin="10-p",method="Configure"} >0',
      'nri_plugin_handler_duration_seconds_count{plugin="10-p",method="Configure"} 1',
      'nri_plugin_handler_duration_seconds_sum{plugin="10-p",method="Synchronize"} >0',
      'nri_plugin_handler_duration_seconds_count{plugin="10-p",method="Synchronize"} 1',
      'nri_plugin_handler_duration_seconds_sum{plugin="10-p",method="CreateContainer"} >0',
      'nri_plugin_handler_duration_seconds_count{plugin="10-p",method="CreateContainer"} 1',
      'nri_plugin_handler_duration_seconds_sum{plugin="10-p",method="RunPodSandbox"} >0',
      'nri_plugin_handler_duration_seconds_count{plugin="10-p",method="RunPodSandbox"} 1',
      'nri_plugin_connected{plugin="10-p"} 1',
      'nri_plugin_registrations_total{plugin="10-p"} 1',
      'nri_plugin_reconnects_total{plugin="10-p"} 0',
      'nri_plugin_runtime_info{plugin="10-p",runtime="rt",version="1.2",nri_version="v0.12.5",revision="v1beta1"} 1',
    ]);
  });

  it("count a connection after the first as a reconnection, share the metrics and follow the runtime", async () => {
    const registry = new Registry();
    const path = socketPath();
    const first = await runtime(path);
    const p1 = await plugin(first, { runPodSandbox: () => undefined }, registry);
    await first.stop();
    await p1.closed;
    expect((await samples(registry)).filter((l) => l.startsWith("nri_plugin_connected"))).toEqual(['nri_plugin_connected{plugin="10-p"} 0']);
    const second = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt2", version: "2", log: quiet });
    await second.start();
    cleanup.push(() => second.stop());
    await plugin(second, { runPodSandbox: () => undefined }, registry);
    const s = await samples(registry);
    expect(s.filter((l) => /connected|registrations|reconnects|runtime_info/u.test(l))).toEqual([
      'nri_plugin_connected{plugin="10-p"} 1',
      'nri_plugin_registrations_total{plugin="10-p"} 2',
      'nri_plugin_reconnects_total{plugin="10-p"} 1',
      'nri_plugin_runtime_info{plugin="10-p",runtime="rt2",version="2",nri_version="v0.12.5",revision="v1beta1"} 1',
    ]);
  });

  it("refuse an option that is neither a boolean nor options, a bad prefix and a registry that is none", () => {
    expect(() => new NriPlugin({}, { idx: "10", name: "p", env: {}, prometheus: "on" as never })).toThrow(new TypeError("nri: prometheus is a string, not a boolean or an object of options"));
    expect(() => new NriPlugin({}, { idx: "10", name: "p", env: {}, tracing: 1 as never })).toThrow(new TypeError("nri: tracing is a number, not a boolean or an object of options"));
    expect(() => new NriPlugin({}, { idx: "10", name: "p", env: {}, prometheus: { prefix: "nri-plugin" } })).toThrow(new RangeError('nri: prometheus prefix "nri-plugin" is not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)'));
    expect(() => new NriRuntime({ name: "r", version: "1", prometheus: { registry: {} as never } })).toThrow(new TypeError("nri: prometheus registry is not a prom-client Registry"));
  });
});
