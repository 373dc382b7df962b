/**
 * `--observe LIST` of the TypeScript bench programs: what operators turn on, comma-separated:
 * `interceptors` (one that passes every call on), `metrics` (Prometheus, prom-client's global
 * registry), `traces` (OpenTelemetry through @opentelemetry/api with no SDK registered: what
 * tracing costs a process whose operator did not set up an exporter). Absent: nothing.
 */
import { flag } from "./args.js";

export interface Observing {
  interceptors: boolean;
  metrics: boolean;
  traces: boolean;
}

const KINDS = ["interceptors", "metrics", "traces"] as const;

export function observing(): Observing {
  const list = process.argv.includes("--observe") ? flag("observe", "").split(",") : [];
  for (const k of list) if (!(KINDS as readonly string[]).includes(k)) throw new Error(`bench: --observe "${k}" is not ${KINDS.join(", ")}`);
  return { interceptors: list.includes("interceptors"), metrics: list.includes("metrics"), traces: list.includes("traces") };
}

/** An interceptor that only passes the call on: the price of the chain itself. */
export const passThrough = <C, R>(next: (call: C) => Promise<R>) => (call: C): Promise<R> => next(call);
