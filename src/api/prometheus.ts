import { featureOption } from "../internal/optional-peer.js";

/*
 * What the plugin's and the runtime's Prometheus metrics share: the options and their checks.
 * prom-client itself is loaded by prom-client.ts, whose types no public declaration names (a
 * project without prom-client type-checks against nri-wire all the same).
 */

/** A prom-client Registry, as far as nri-wire uses one. */
export interface PromRegistry {
  /** The metric registered under `name`, if any. */
  getSingleMetric(name: string): unknown;
  /** Registers a metric. */
  registerMetric(metric: never): void;
  /** Every metric in the text format. */
  metrics(): Promise<string>;
  /** The text format's content type. */
  readonly contentType: string;
}

/** Prometheus metrics through prom-client, an optional peer dependency. */
export interface PrometheusOptions {
  /** Where the metrics are registered; default prom-client's global `register`. */
  registry?: PromRegistry;
  /** The metrics' name prefix; default `nri_plugin` for a plugin, `nri_runtime` for a runtime. */
  prefix?: string;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/u;

/**
 * The `prometheus` option where it enters: off (undefined), or options whose prefix is a metric
 * name and whose registry looks like prom-client's.
 */
export function prometheusOption(value: boolean | PrometheusOptions | undefined): PrometheusOptions | undefined {
  const o = featureOption("nri: prometheus", value);
  if (o === undefined) return undefined;
  if (o.prefix !== undefined && (typeof o.prefix !== "string" || !NAME.test(o.prefix))) {
    throw new RangeError(`nri: prometheus prefix ${JSON.stringify(o.prefix)} is not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)`);
  }
  const r = o.registry;
  if (r !== undefined && (r === null || typeof r !== "object" || typeof r.getSingleMetric !== "function" || typeof r.registerMetric !== "function")) {
    throw new TypeError("nri: prometheus registry is not a prom-client Registry");
  }
  return o;
}

/**
 * The metric `name` of `registry`, made by `make` (registered there) the first time: several
 * plugins or runtimes in one process, and a plugin that connects again, share their metrics.
 */
export function metricOnce<M>(registry: PromRegistry, name: string, make: (registers: PromRegistry[]) => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make([registry]);
}

/** Buckets for call latencies in seconds: 100 µs to 2.5 s (past the runtimes' 2 s default timeout). */
export const LATENCY_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
