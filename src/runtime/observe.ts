import { errorText } from "../internal/error-text.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { ResolvedOptions } from "./options.js";
import type { RuntimeTracer } from "./tracing.js";

/**
 * The Prometheus hooks and the tracer a runtime's options ask for. One that cannot be set up
 * (its optional peer is missing, say) is one error line, and the runtime goes on without it.
 */
export async function observeRuntime(o: ResolvedOptions): Promise<{ metrics?: RuntimeMetrics; tracer?: RuntimeTracer }> {
  const out: { metrics?: RuntimeMetrics; tracer?: RuntimeTracer } = {};
  const off = (e: unknown): void => o.log.error(`nri: runtime ${o.name}: ${errorText(e)}; going on without them`);
  if (o.tracing !== undefined) {
    try {
      out.tracer = await (await import("./tracing.js")).runtimeTracer(o.tracing);
    } catch (e) {
      off(e);
    }
  }
  if (o.prometheus !== undefined) {
    try {
      out.metrics = await (await import("./prometheus.js")).prometheusMetrics(o.prometheus);
    } catch (e) {
      off(e);
    }
  }
  return out;
}
