import type { Revision } from "./revision.js";
import { packages } from "./revision.js";

/*
 * What the plugin's and the runtime's traces share: the options, W3C trace context in ttrpc
 * metadata, and the attributes of an NRI call's span. @opentelemetry/api itself is loaded by
 * otel-api.ts, whose types no public declaration names.
 */

/** A tracer provider as @opentelemetry/api declares one (an SDK's, or the API's global one). */
export interface TracerProviderLike {
  /** The tracer of an instrumentation scope (nri-wire asks for `nri-wire`). */
  getTracer(name: string, version?: string): unknown;
}

/** OpenTelemetry traces through @opentelemetry/api, an optional peer dependency. */
export interface TracingOptions {
  /**
   * Where spans go; default the API's global provider: the SDK the process registered, or
   * none (then spans are not recorded and cost next to nothing).
   */
  tracerProvider?: TracerProviderLike;
}

/** The parts of a W3C `traceparent` header. */
export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/u;

/**
 * A `traceparent` value read as W3C Trace Context level 1 reads it: version ff and all-zero ids
 * are invalid; a version 00 value has exactly four parts; a later version may carry more.
 */
export function parseTraceParent(value: string): TraceParent | undefined {
  const m = TRACEPARENT.exec(value.trim());
  if (m === null) return undefined;
  const [, version, traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (version === "ff" || (version === "00" && value.trim().length !== 55)) return undefined;
  if (/^0+$/u.test(traceId) || /^0+$/u.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** A version 00 `traceparent` value. */
export function formatTraceParent(p: TraceParent): string {
  return `00-${p.traceId}-${p.spanId}-${(p.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The first value of `key` (case-insensitive, as HTTP headers are) among metadata entries. */
export function metadataValue(entries: readonly { key: string; value: string }[], key: string): string | undefined {
  for (const e of entries) if (e.key.toLowerCase() === key) return e.value;
  return undefined;
}

interface PodLike {
  readonly id?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly namespace?: string;
}
interface ContainerLike {
  readonly id?: string;
  readonly name?: string;
}

/** Span attributes: string values only, what OpenTelemetry's Attributes accept. */
export type SpanAttributes = Record<string, string>;

/**
 * The attributes of an NRI call's span: the RPC (OpenTelemetry's rpc.* conventions), the plugin
 * and revision, and the pod and container of the request, when it has them (k8s.*, container.*).
 */
export function callAttributes(method: string, revision: Revision | undefined, plugin: string, request: unknown): SpanAttributes {
  const a: SpanAttributes = { "rpc.system": "ttrpc", "rpc.service": `${packages[revision ?? "v1beta1"]}.Plugin`, "rpc.method": method, "nri.plugin": plugin };
  if (revision !== undefined) a["nri.revision"] = revision;
  return podAttributes(request, a);
}

/** `into` with the attributes of the pod and container of `request`, when it has them. */
export function podAttributes(request: unknown, into: SpanAttributes = {}): SpanAttributes {
  const a = into;
  const r = request as { pod?: PodLike; container?: ContainerLike } | undefined;
  const pod = r?.pod;
  if (pod !== undefined) {
    if (pod.namespace) a["k8s.namespace.name"] = pod.namespace;
    if (pod.name) a["k8s.pod.name"] = pod.name;
    if (pod.uid) a["k8s.pod.uid"] = pod.uid;
    if (pod.id) a["nri.pod_sandbox.id"] = pod.id;
  }
  const container = r?.container;
  if (container !== undefined) {
    if (container.id) a["container.id"] = container.id;
    if (container.name) a["k8s.container.name"] = container.name;
  }
  return a;
}
