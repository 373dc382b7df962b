import type { Context } from "@opentelemetry/api";
import { loadOtelApi, nriTracer, withSpan } from "../api/otel-api.js";
import { packages } from "../api/revision.js";
import { pluginService } from "../api/services.js";
import { type TracingOptions, callAttributes, metadataValue, parseTraceParent } from "../api/tracing.js";
import type { PluginObserver } from "./observer.js";

/**
 * A plugin's traces (@opentelemetry/api must be installed): a SERVER span per call, child of the
 * `traceparent` the runtime sent in the call's ttrpc metadata (else of the active context), and
 * the active span while the handler runs.
 */
export async function tracingObserver(o: TracingOptions): Promise<PluginObserver> {
  const api = await loadOtelApi();
  const tracer = nriTracer(api, o.tracerProvider);
  return {
    interceptor: (next) => async (call) => {
      const method = pluginService[call.method].name;
      let parent: Context = api.context.active();
      const tp = parseTraceParent(metadataValue(call.metadata, "traceparent") ?? "");
      if (tp !== undefined) {
        const state = metadataValue(call.metadata, "tracestate");
        parent = api.trace.setSpanContext(parent, { ...tp, isRemote: true, ...(state === undefined ? {} : { traceState: api.createTraceState(state) }) });
      }
      const span = tracer.startSpan(`${packages[call.revision]}.Plugin/${method}`, { kind: api.SpanKind.SERVER }, parent);
      if (span.isRecording()) span.setAttributes(callAttributes(method, call.revision, call.plugin.id, call.request));
      return withSpan(api, span, parent, next, call);
    },
  };
}
