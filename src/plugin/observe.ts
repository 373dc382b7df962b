import type { Logger } from "../api/logger.js";
import type { PrometheusOptions } from "../api/prometheus.js";
import type { TracingOptions } from "../api/tracing.js";
import { errorText } from "../internal/error-text.js";
import type { PluginObserver } from "./observer.js";

/**
 * The observers a plugin's options ask for, traces first (outermost). One that cannot be set up
 * (its optional peer is missing, say) is one error line, and the plugin goes on without it.
 */
export async function pluginObservers(o: { readonly prometheus: PrometheusOptions | undefined; readonly tracing: TracingOptions | undefined }, id: string, log: Logger): Promise<PluginObserver[]> {
  const out: PluginObserver[] = [];
  const add = async (make: () => Promise<PluginObserver>): Promise<void> => {
    try {
      out.push(await make());
    } catch (e) {
      log.error(`nri: plugin ${id}: ${errorText(e)}; going on without them`);
    }
  };
  if (o.tracing !== undefined) {
    const tracing = o.tracing;
    await add(async () => (await import("./tracing.js")).tracingObserver(tracing));
  }
  if (o.prometheus !== undefined) {
    const prometheus = o.prometheus;
    await add(async () => (await import("./prometheus.js")).prometheusObserver(prometheus));
  }
  return out;
}
