/**
 * Env injector: every container created in a pod annotated `nri-wire.dev/adjust: "true"` gets
 * the environment variables and annotations of its configuration and, when it names one, a pids
 * limit. The configuration is the text of Configure (for a DaemonSet, the chart's `config`
 * value; for a pre-installed plugin, the runtime's plugin config file), JSON:
 *
 *     {"env": {"NAME": "value"}, "annotations": {"key": "value"}, "pidsLimit": 512}
 *
 * An entry for `nri-wire build` (its default export is the plugin's handlers):
 *
 *     nri-wire build examples/env-injector.ts --name env-injector --idx 50 --out DIR
 *
 * The cluster suite deploys it beside a Go plugin with the same behaviour.
 */
import type { PluginHandlers } from "nri-wire/plugin";

/** The pod annotation that opts a pod's containers in. */
export const SELECTOR = "nri-wire.dev/adjust";

/** What the injector adds. */
export interface EnvInjectorConfig {
  env: Record<string, string>;
  annotations: Record<string, string>;
  pidsLimit: number;
}

/** The config of a Configure text; throws naming what is wrong. */
export function parseConfig(text: string): EnvInjectorConfig {
  const config: EnvInjectorConfig = { env: {}, annotations: {}, pidsLimit: 0 };
  if (text.trim() === "") return config;
  const raw = JSON.parse(text) as Record<string, unknown>;
  for (const key of Object.keys(raw)) if (!(key in config)) throw new Error(`env-injector: config: unknown field "${key}"`);
  const strings = (field: "env" | "annotations") => {
    const v = raw[field] ?? {};
    if (typeof v !== "object" || v === null || Object.values(v).some((x) => typeof x !== "string")) throw new Error(`env-injector: config: "${field}" must map names to strings`);
    return v as Record<string, string>;
  };
  config.env = strings("env");
  config.annotations = strings("annotations");
  const pids = raw.pidsLimit ?? 0;
  if (!Number.isSafeInteger(pids) || (pids as number) < 0) throw new Error(`env-injector: config: pidsLimit ${JSON.stringify(pids)} is not a non-negative integer`);
  config.pidsLimit = pids as number;
  return config;
}

let config = parseConfig("");

export default {
  configure: (req) => {
    config = parseConfig(req.config);
    return undefined;
  },
  createContainer: (req) => {
    if (req.pod?.annotations[SELECTOR] !== "true") return undefined;
    return {
      adjust: {
        env: Object.entries(config.env).map(([key, value]) => ({ key, value })),
        annotations: config.annotations,
        ...(config.pidsLimit > 0 ? { linux: { resources: { pids: { limit: config.pidsLimit } } } } : {}),
      },
    };
  },
} satisfies PluginHandlers;
