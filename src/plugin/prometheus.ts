import type { Counter, Gauge, Histogram } from "prom-client";
import { loadPromClient } from "../api/prom-client.js";
import { LATENCY_BUCKETS, type PrometheusOptions, type PromRegistry, metricOnce } from "../api/prometheus.js";
import { pluginService } from "../api/services.js";
import { RpcError } from "../ttrpc/errors.js";
import { codeName } from "../ttrpc/status.js";
import type { PluginObserver } from "./observer.js";
import type { RuntimeInfo } from "./options.js";

/** The metrics of a plugin process, one set per registry and prefix (reconnections share it). */
interface PluginMetricSet {
  readonly events: Counter<"plugin" | "method" | "outcome">;
  readonly duration: Histogram<"plugin" | "method">;
  readonly connected: Gauge<"plugin">;
  readonly registrations: Counter<"plugin">;
  readonly reconnects: Counter<"plugin">;
  readonly runtime: Gauge<"plugin" | "runtime" | "version" | "nri_version" | "revision">;
  /** Plugins that connected before in this process: their next connection is a reconnection. */
  readonly seen: Set<string>;
  /** The runtime labels each plugin last reported, to remove when it changes. */
  readonly runtimes: Map<string, Record<string, string>>;
}

const sets = new WeakMap<PromRegistry, Map<string, PluginMetricSet>>();

/**
 * The names, help and labels of a plugin's metrics (`prefix` default `nri_plugin`); the table
 * in docs/operations.md lists the same.
 */
function metricSet(prom: Awaited<ReturnType<typeof loadPromClient>>, registry: PromRegistry, p: string): PluginMetricSet {
  let byPrefix = sets.get(registry);
  if (byPrefix === undefined) sets.set(registry, (byPrefix = new Map()));
  const known = byPrefix.get(p);
  if (known !== undefined) return known;
  const set: PluginMetricSet = {
    events: metricOnce(registry, `${p}_events_total`, (registers) => new prom.Counter({ name: `${p}_events_total`, help: "Calls of the runtime the plugin handled, by method and outcome (success, or the status code of the error).", labelNames: ["plugin", "method", "outcome"], registers: registers as never })),
    duration: metricOnce(registry, `${p}_handler_duration_seconds`, (registers) => new prom.Histogram({ name: `${p}_handler_duration_seconds`, help: "Time from a call's request to its answer in the plugin, by method.", labelNames: ["plugin", "method"], buckets: [...LATENCY_BUCKETS], registers: registers as never })),
    connected: metricOnce(registry, `${p}_connected`, (registers) => new prom.Gauge({ name: `${p}_connected`, help: "1 while the plugin is registered with a runtime, else 0.", labelNames: ["plugin"], registers: registers as never })),
    registrations: metricOnce(registry, `${p}_registrations_total`, (registers) => new prom.Counter({ name: `${p}_registrations_total`, help: "Times the plugin was registered, configured and synchronized.", labelNames: ["plugin"], registers: registers as never })),
    reconnects: metricOnce(registry, `${p}_reconnects_total`, (registers) => new prom.Counter({ name: `${p}_reconnects_total`, help: "Connections to a runtime after the process's first.", labelNames: ["plugin"], registers: registers as never })),
    runtime: metricOnce(registry, `${p}_runtime_info`, (registers) => new prom.Gauge({ name: `${p}_runtime_info`, help: "The runtime the plugin is registered with: name, version, NRI release and protocol revision (value 1).", labelNames: ["plugin", "runtime", "version", "nri_version", "revision"], registers: registers as never })),
    seen: new Set(),
    runtimes: new Map(),
  };
  byPrefix.set(p, set);
  return set;
}

/** The outcome label of a failed call: the status code the runtime receives, in lowercase. */
function outcomeOf(e: unknown): string {
  return e instanceof RpcError ? codeName(e.code) : "unknown";
}

/** A plugin's Prometheus metrics (prom-client must be installed): an interceptor and the lifecycle. */
export async function prometheusObserver(o: PrometheusOptions): Promise<PluginObserver> {
  const prom = await loadPromClient();
  const registry = o.registry ?? (prom.register as unknown as PromRegistry);
  const m = metricSet(prom, registry, o.prefix ?? "nri_plugin");
  return {
    interceptor: (next) => async (call) => {
      const labels = { plugin: call.plugin.id, method: pluginService[call.method].name };
      const started = performance.now();
      try {
        const answer = await next(call);
        m.events.inc({ ...labels, outcome: "success" });
        return answer;
      } catch (e) {
        m.events.inc({ ...labels, outcome: outcomeOf(e) });
        throw e;
      } finally {
        m.duration.observe(labels, (performance.now() - started) / 1000);
      }
    },
    connecting: (id) => {
      if (m.seen.has(id)) m.reconnects.inc({ plugin: id });
      else {
        m.seen.add(id);
        // Every series of the plugin exists from the start, at 0.
        m.reconnects.inc({ plugin: id }, 0);
        m.registrations.inc({ plugin: id }, 0);
      }
      m.connected.set({ plugin: id }, 0);
    },
    registered: (id, rt: RuntimeInfo) => {
      m.registrations.inc({ plugin: id });
      m.connected.set({ plugin: id }, 1);
      const labels = { plugin: id, runtime: rt.name, version: rt.version, nri_version: rt.nriVersion ?? "", revision: rt.revision };
      const before = m.runtimes.get(id);
      if (before !== undefined) m.runtime.remove(before);
      m.runtimes.set(id, labels);
      m.runtime.set(labels, 1);
    },
    closed: (id) => m.connected.set({ plugin: id }, 0),
  };
}
