import { loadPromClient } from "../api/prom-client.js";
import { LATENCY_BUCKETS, type PrometheusOptions, type PromRegistry, metricOnce } from "../api/prometheus.js";
import { RpcError } from "../ttrpc/errors.js";
import { codeName } from "../ttrpc/status.js";
import { PluginCallError } from "./errors.js";
import type { RuntimeMetrics } from "./metrics.js";

/**
 * containerd's error label of a failed call (its `getErrorType`): the deadline and cancellation,
 * else the status code the plugin answered with, else `other` (a lost connection, an answer
 * that does not parse, a builtin's plain error).
 */
export function errorLabel(err: Error): string {
  if (err instanceof PluginCallError) {
    if (err.failure === "deadline") return "deadline_exceeded";
    if (err.failure === "canceled") return "canceled";
    if (err.failure === "status" && err.cause instanceof RpcError) return codeName(err.cause.code);
  }
  return "other";
}

/**
 * A runtime's Prometheus metrics (prom-client must be installed), as hooks: containerd's four
 * (`containerd_nri_*` with the prefix `containerd_nri`) and four more. The table in
 * docs/operations.md lists the names, help and labels.
 */
export async function prometheusMetrics(o: PrometheusOptions): Promise<RuntimeMetrics> {
  const prom = await loadPromClient();
  const registry = o.registry ?? (prom.register as unknown as PromRegistry);
  const p = o.prefix ?? "nri_runtime";
  const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
    metricOnce(registry, `${p}_${name}`, (registers) => new prom.Counter<L>({ name: `${p}_${name}`, help, labelNames, registers: registers as never }));
  const invocations = counter("plugin_invocations_total", "Calls to NRI plugins (events, validations, Synchronize pages), by status and error type.", ["plugin", "operation", "status", "error"]);
  const adjustments = counter("plugin_adjustments_total", "Container updates and evictions NRI plugins answered with, by type.", ["plugin", "operation", "type"]);
  const timeouts = counter("plugin_timeouts_total", "Calls to NRI plugins that ran out of time.", ["plugin", "operation"]);
  const drops = counter("plugin_drops_total", "NRI plugins closed by the failure policy (a timeout, a lost connection), by the call they failed.", ["plugin", "operation"]);
  const refusals = counter("validation_refusals_total", "Container adjustments an NRI validator refused.", ["plugin"]);
  const conflicts = counter("merge_conflicts_total", "NRI plugin answers the merge refused (two plugins setting one field, an update during creation).", ["plugin", "operation"]);
  const latency = metricOnce(registry, `${p}_plugin_latency_seconds`, (registers) => new prom.Histogram({ name: `${p}_plugin_latency_seconds`, help: "Time NRI plugins took to answer, by operation.", labelNames: ["plugin", "operation"], buckets: [...LATENCY_BUCKETS], registers: registers as never }));
  const active = metricOnce(registry, `${p}_active_plugins`, (registers) => new prom.Gauge({ name: `${p}_active_plugins`, help: "NRI plugins in the runtime's plugin list.", registers: registers as never }));
  return {
    recordPluginInvocation: (plugin, operation, err) => {
      invocations.inc({ plugin, operation, status: err === undefined ? "success" : "error", error: err === undefined ? "" : errorLabel(err) });
      if (err instanceof PluginCallError && err.failure === "deadline") timeouts.inc({ plugin, operation });
    },
    recordPluginLatency: (plugin, operation, ms) => latency.observe({ plugin, operation }, ms / 1000),
    recordPluginAdjustments: (plugin, operation, _adjust, updates, evicts) => {
      if (updates > 0) adjustments.inc({ plugin, operation, type: "update" }, updates);
      if (evicts > 0) adjustments.inc({ plugin, operation, type: "evict" }, evicts);
    },
    updatePluginCount: (count) => active.set(count),
    recordPluginDrop: (plugin, operation) => drops.inc({ plugin, operation }),
    recordValidationRefusal: (plugin) => refusals.inc({ plugin }),
    recordMergeConflict: (plugin, operation) => conflicts.inc({ plugin, operation }),
  };
}
