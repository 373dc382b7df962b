import { isMissing, missingPeerError } from "../internal/optional-peer.js";

/** The @opentelemetry/api module (an optional peer: no public declaration names this type). */
export type OtelApi = typeof import("@opentelemetry/api");

/** Loads @opentelemetry/api; rejects with one line saying to install it when it is missing. */
export async function loadOtelApi(): Promise<OtelApi> {
  try {
    const m = (await import("@opentelemetry/api")) as OtelApi & { default?: OtelApi };
    return typeof m.trace === "object" ? m : m.default!;
  } catch (e) {
    if (isMissing(e, "@opentelemetry/api")) throw missingPeerError("@opentelemetry/api", "traces", e);
    throw e;
  }
}

/** The tracer of nri-wire's spans from `provider`, or the API's global provider. */
export function nriTracer(api: OtelApi, provider: { getTracer(name: string, version?: string): unknown } | undefined): import("@opentelemetry/api").Tracer {
  const p = provider ?? api.trace.getTracerProvider();
  if (p === null || typeof p !== "object" || typeof p.getTracer !== "function") throw new Error("nri: tracing tracerProvider has no getTracer method");
  return p.getTracer("nri-wire") as import("@opentelemetry/api").Tracer;
}

/** Records `e` on `span` and marks it failed. */
export function failSpan(api: OtelApi, span: import("@opentelemetry/api").Span, e: unknown): void {
  if (!span.isRecording()) return;
  const err = e instanceof Error ? e : new Error(String(e));
  span.recordException(err);
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: err.message });
}

/**
 * Runs `next(call)` with `span` active (a child of `parent`), records its error on the span,
 * and ends the span either way.
 */
export async function withSpan<C, R>(api: OtelApi, span: import("@opentelemetry/api").Span, parent: import("@opentelemetry/api").Context, next: (call: C) => Promise<R>, call: C): Promise<R> {
  try {
    return await api.context.with(api.trace.setSpan(parent, span), next, undefined, call);
  } catch (e) {
    failSpan(api, span, e);
    throw e;
  } finally {
    span.end();
  }
}
