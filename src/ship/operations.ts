/**
 * What a built plugin offers operators, each turned on by a flag or its environment variable (the
 * chart sets the variables): `/metrics` for Prometheus on a port, traces sent over OTLP/HTTP, and
 * JSON log lines. Bad input (a port in use or invalid, an unknown level, an endpoint that
 * refuses) is one line on stderr, and the plugin goes on serving events without that part.
 */
import type { Server } from "node:http";
import type { JsonLoggerOptions, LogLevel } from "../api/json-logger.js";
import { LOG_LEVELS, jsonLogger } from "../api/json-logger.js";
import type { Logger } from "../api/logger.js";
import { loadPromClient } from "../api/prom-client.js";
import type { PromRegistry } from "../api/prometheus.js";
import type { TracerProviderLike } from "../api/tracing.js";
import { errorText } from "../internal/error-text.js";
import { isMissing } from "../internal/optional-peer.js";
import type { PluginOptions } from "../plugin/options.js";

/** The command-line options of operations, for parseArgs. */
export const OPERATIONS_ARGS = {
  "metrics-port": { type: "string" },
  "metrics-address": { type: "string" },
  "log-format": { type: "string" },
  "log-level": { type: "string" },
  "trace-endpoint": { type: "string" },
  "trace-sampling": { type: "string" },
} as const;

/** The environment variable of each flag (OpenTelemetry's own for the traces). */
export const OPERATIONS_ENV = {
  "metrics-port": "NRI_WIRE_METRICS_PORT",
  "metrics-address": "NRI_WIRE_METRICS_ADDRESS",
  "log-format": "NRI_WIRE_LOG_FORMAT",
  "log-level": "NRI_WIRE_LOG_LEVEL",
  "trace-endpoint": "OTEL_EXPORTER_OTLP_ENDPOINT",
  "trace-sampling": "OTEL_TRACES_SAMPLER_ARG",
} as const;

type Flag = keyof typeof OPERATIONS_ARGS;

/** What operations give the plugin's connections, and how to end them. */
export interface Operations {
  /** Options of every NriPlugin the executable makes: metrics, traces, the logger. */
  readonly plugin: Pick<PluginOptions, "prometheus" | "tracing" | "log">;
  /** Where the executable's own lines go. */
  readonly say: (line: string) => void;
  /** Stops serving metrics and sends the spans still held. */
  close(): Promise<void>;
}

/** The metrics server, once listening. */
export interface MetricsServer {
  readonly server: Server;
  readonly port: number;
}

/**
 * Sets up what the flags (or, for those not given, the environment) ask for. `id` is the
 * plugin's `NN-name`; `say` writes the executable's plain lines.
 */
export async function startOperations(flags: Partial<Record<Flag, string>>, env: NodeJS.ProcessEnv, id: string, say: (line: string) => void): Promise<Operations> {
  const value = (f: Flag): string | undefined => {
    const v = flags[f] ?? env[OPERATIONS_ENV[f]];
    return v === undefined || v === "" ? undefined : v;
  };
  const log = logger(value("log-format"), value("log-level"), id, say);
  const line = (l: string): void => log.error(l);
  const closers: (() => Promise<void>)[] = [];
  const plugin: { -readonly [K in keyof Operations["plugin"]]: Operations["plugin"][K] } = { log };

  const port = value("metrics-port");
  if (port !== undefined) {
    const served = await serveMetrics(port, value("metrics-address") ?? "0.0.0.0", line);
    if (served !== undefined) {
      plugin.prometheus = { registry: served.registry };
      closers.push(() => new Promise((resolve) => served.server.server.close(() => resolve())));
    }
  }
  const endpoint = value("trace-endpoint");
  if (endpoint !== undefined) {
    const provider = await tracerProvider(endpoint, value("trace-sampling"), id, line);
    if (provider !== undefined) {
      plugin.tracing = { tracerProvider: provider };
      closers.push(() => provider.shutdown().catch(() => undefined));
    }
  }
  return {
    plugin,
    // The executable's progress lines: as they are in text, at info level in JSON.
    say: value("log-format") === "json" ? (l) => log.info(l) : say,
    close: async () => void (await Promise.all(closers.map((c) => c()))),
  };
}

/**
 * The executable's logger: its plain `NN-NAME: ...` lines (warnings and errors) by default, or
 * JSON lines at a level. A format or level it does not know is one line, and the default stays.
 */
function logger(format: string | undefined, level: string | undefined, id: string, say: (line: string) => void): Logger {
  const plain: Logger = { info: () => undefined, warn: say, error: say };
  if (format !== undefined && format !== "json" && format !== "text") {
    say(`log format ${JSON.stringify(format)} is not "text" or "json"; logging text`);
    return plain;
  }
  let lvl: LogLevel | undefined;
  if (level !== undefined) {
    if ((LOG_LEVELS as readonly string[]).includes(level)) lvl = level as LogLevel;
    else say(`log level ${JSON.stringify(level)} is not ${LOG_LEVELS.map((l) => JSON.stringify(l)).join(", ").replace(/, ([^,]*)$/u, " or $1")}; logging at ${format === "json" ? "info" : "warn"}`);
  }
  if (format === "json") {
    const o: JsonLoggerOptions = { fields: { plugin: id }, ...(lvl === undefined ? {} : { level: lvl }) };
    return jsonLogger(o);
  }
  if (lvl === "info") return { ...plain, info: say };
  if (lvl === "error") return { ...plain, warn: () => undefined };
  return plain;
}

/** A TCP port number from text: an integer from 1 to 65535. */
export function parsePort(text: string): number | undefined {
  if (!/^[0-9]{1,5}$/u.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/**
 * Serves `registry`'s metrics at /metrics on `address:port`. Serving never blocks an event:
 * collecting the metrics reads counters the calls have already updated. On a bad port, a port in
 * use or a missing prom-client it says why in one line and resolves with undefined.
 */
export async function serveMetrics(portText: string, address: string, line: (l: string) => void): Promise<{ server: MetricsServer; registry: PromRegistry } | undefined> {
  const port = parsePort(portText);
  if (port === undefined) {
    line(`metrics: port ${JSON.stringify(portText)} is not a port number (1 to 65535); not serving metrics`);
    return undefined;
  }
  let registry: PromRegistry;
  try {
    const prom = await loadPromClient();
    registry = new prom.Registry() as unknown as PromRegistry;
  } catch (e) {
    line(`metrics: ${errorText(e)}, and build again; not serving metrics`);
    return undefined;
  }
  // Loaded when asked for: an executable's startup snapshot holds no HTTP machinery it may not use.
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    if (path !== "/metrics") {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("not found: metrics are at /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "Content-Type": registry.contentType }).end(req.method === "HEAD" ? undefined : text),
      (e: unknown) => res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" }).end(`${errorText(e)}\n`),
    );
  });
  // The server must not keep the process alive: the plugin decides when it ends.
  server.unref();
  const listening = await new Promise<Error | undefined>((resolve) => {
    server.once("error", resolve);
    server.listen(port, address, () => resolve(undefined));
  });
  if (listening !== undefined) {
    const code = (listening as NodeJS.ErrnoException).code;
    const why = code === "EADDRINUSE" ? "the port is in use (EADDRINUSE)" : code === "EACCES" ? "permission denied (EACCES)" : errorText(listening);
    line(`metrics: cannot listen on ${address}:${port}: ${why}; not serving metrics`);
    return undefined;
  }
  // A later socket error is a line; the plugin goes on.
  server.on("error", (e) => line(`metrics: ${errorText(e)}`));
  return { server: { server, port: (server.address() as { port: number }).port }, registry };
}

/** A tracer provider with a shutdown (the SDK's). */
interface ShutdownProvider extends TracerProviderLike {
  shutdown(): Promise<void>;
}

/**
 * An OpenTelemetry SDK provider sending spans in batches to `endpoint` over OTLP/HTTP (JSON), a
 * parent-based sampler at `sampling` (0 to 1, default 1) for the traces the plugin starts. It
 * needs @opentelemetry/sdk-trace and @opentelemetry/exporter-trace-otlp-http in the bundle: `nri-wire
 * build` takes them in when the project has them installed. Without them, a bad endpoint or rate:
 * one line, and undefined. An export that fails is one line until one succeeds again.
 */
export async function tracerProvider(endpoint: string, sampling: string | undefined, id: string, line: (l: string) => void): Promise<ShutdownProvider | undefined> {
  let url: URL;
  try {
    url = new URL(endpoint);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`protocol ${url.protocol} is not http: or https:`);
  } catch (e) {
    line(`traces: endpoint ${JSON.stringify(endpoint)} is not an http(s) URL (${errorText(e)}); not sending traces`);
    return undefined;
  }
  let ratio = 1;
  if (sampling !== undefined) {
    ratio = Number(sampling);
    if (sampling.trim() === "" || !Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
      line(`traces: sampling rate ${JSON.stringify(sampling)} is not a number from 0 to 1; sampling every trace`);
      ratio = 1;
    }
  }
  let sdk: typeof import("@opentelemetry/sdk-trace");
  let otlp: typeof import("@opentelemetry/exporter-trace-otlp-http");
  let resources: typeof import("@opentelemetry/resources");
  try {
    sdk = await import("@opentelemetry/sdk-trace");
    otlp = await import("@opentelemetry/exporter-trace-otlp-http");
    resources = await import("@opentelemetry/resources");
  } catch (e) {
    const missing = ["@opentelemetry/sdk-trace", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources"].filter((n) => isMissing(e, n));
    if (missing.length === 0) throw e;
    line(`traces: this plugin was built without ${missing[0]} (npm install @opentelemetry/api @opentelemetry/sdk-trace @opentelemetry/exporter-trace-otlp-http @opentelemetry/resources, and build again); not sending traces`);
    return undefined;
  }
  // OTEL_EXPORTER_OTLP_ENDPOINT is the collector's base: traces go to /v1/traces under it.
  const base = url.href.endsWith("/") ? url.href : `${url.href}/`;
  const exporter = new otlp.OTLPTraceExporter({ url: new URL("v1/traces", base).href });
  let failing = false;
  const reporting: import("@opentelemetry/sdk-trace").SpanExporter = {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code !== 0 && !failing) line(`traces: cannot send spans to ${base}: ${errorText(result.error ?? "export failed")}; dropping spans until it answers`);
        if (result.code === 0 && failing) line(`traces: sending spans to ${base} again`);
        failing = result.code !== 0;
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };
  return new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ "service.name": `nri-plugin-${id}` }),
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: reporting, scheduledDelayMillis: 1000 })],
  });
}
