import type { Context } from "@opentelemetry/api";
import { failSpan, loadOtelApi, nriTracer, withSpan } from "../api/otel-api.js";
import { packages } from "../api/revision.js";
import { pluginService } from "../api/services.js";
import { type TracingOptions, callAttributes, formatTraceParent, podAttributes } from "../api/tracing.js";
import type { RuntimeInterceptor } from "./interceptors.js";

/** The runtime's traces: a span per event, and an interceptor with a span per call to a plugin. */
export interface RuntimeTracer {
  /** Runs one event (holding the event lock) inside its span. */
  event<T>(method: string, request: unknown, run: () => Promise<T>): Promise<T>;
  /** A CLIENT span per call to a plugin; a plugin on a socket gets its `traceparent` in the call's metadata. */
  readonly interceptor: RuntimeInterceptor;
}

/** Calls to a plugin that belong to no event. */
const OUTSIDE_EVENTS: ReadonlySet<string> = new Set(["configure", "synchronize", "shutdown"]);

/**
 * The runtime's traces (@opentelemetry/api must be installed). An event's span is a child of the
 * context active when the event was called, and the parent of its calls to plugins; a call
 * outside events (Configure, Synchronize, Shutdown) is a child of the active context.
 */
export async function runtimeTracer(o: TracingOptions): Promise<RuntimeTracer> {
  const api = await loadOtelApi();
  const tracer = nriTracer(api, o.tracerProvider);
  // Events run one at a time, so one slot holds the running event's context.
  let current: Context | undefined;
  return {
    event: async (method, request, run) => {
      const outer = api.context.active();
      const span = tracer.startSpan(`nri ${method}`, { kind: api.SpanKind.INTERNAL }, outer);
      if (span.isRecording()) span.setAttributes(podAttributes(request, { "nri.event": method }));
      const ctx = api.trace.setSpan(outer, span);
      current = ctx;
      try {
        return await api.context.with(ctx, run);
      } catch (e) {
        failSpan(api, span, e);
        throw e;
      } finally {
        current = undefined;
        span.end();
      }
    },
    interceptor: (next) => async (call) => {
      const method = pluginService[call.method].name;
      const parent = current !== undefined && !OUTSIDE_EVENTS.has(call.method) ? current : api.context.active();
      const revision = call.plugin.revision;
      const span = tracer.startSpan(`${packages[revision ?? "v1beta1"]}.Plugin/${method}`, { kind: api.SpanKind.CLIENT }, parent);
      if (span.isRecording()) span.setAttributes(callAttributes(method, revision, call.plugin.id, call.request));
      const sc = span.spanContext();
      if (call.plugin.kind !== "builtin" && api.isSpanContextValid(sc)) {
        call.metadata.push({ key: "traceparent", value: formatTraceParent(sc) });
        const state = sc.traceState?.serialize();
        if (state !== undefined && state !== "") call.metadata.push({ key: "tracestate", value: state });
      }
      return withSpan(api, span, parent, next, call);
    },
  };
}
