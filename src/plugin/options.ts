import type { Duplex } from "node:stream";
import type { FailurePolicy } from "../../gen/v1beta1/api_lite.js";
import type { Logger } from "../api/logger.js";
import type { Loose } from "../api/loose.js";
import type { Dialect, Revision } from "../api/revision.js";
import type { PluginInterceptor } from "./interceptors.js";
import type { PrometheusOptions } from "../api/prometheus.js";
import type { TracingOptions } from "../api/tracing.js";

/** The runtime a plugin is connected to, as its Configure request told. */
export interface RuntimeInfo {
  readonly name: string;
  readonly version: string;
  /** The runtime's NRI release, sent or inferred; undefined when neither worked. */
  readonly nriVersion: string | undefined;
  /** Whether nriVersion was inferred from the runtime's name and version (older runtimes send none). */
  readonly nriVersionInferred: boolean;
  /** The revision the runtime speaks, as told by the package of its Configure call. */
  readonly revision: Revision;
}

/** Options of a plugin endpoint. */
export interface PluginOptions {
  /** Plugin name; default NRI_PLUGIN_NAME, else the executable's base name (its `name` part if it is `NN-name`). */
  name?: string;
  /** Two-digit index; default NRI_PLUGIN_IDX, else the executable's `NN-name`. */
  idx?: string;
  /** Runtime socket path; default the inherited NRI_PLUGIN_SOCKET fd, else /var/run/nri/nri.sock. */
  socketPath?: string;
  /** An already connected trunk (overrides socketPath). */
  socket?: Duplex;
  /** What the plugin speaks (default v1beta1: both revisions); the others act as older plugins, for tests. */
  dialect?: Dialect;
  /** How long registration, Configure and Synchronize may take in all. Default 5000 ms. */
  registrationTimeoutMs?: number;
  /**
   * Microseconds the event loop keeps polling after an answer is sent, instead of sleeping until
   * the runtime's next request wakes the plugin; only for events back to back (messages none more
   * than 1 ms apart for 10 ms) whose requests came within that time (see "Busy polling" in
   * docs/performance.md). Default 100, enough for the runtime's own turnaround and shorter than
   * other plugins' turns before the next request; 0 turns it off. Events spaced apart never poll.
   */
  busyPollMicros?: number;
  /** Called once when the connection to the runtime ends, with the reason. */
  onClose?: (reason: Error) => void;
  /** Environment to read NRI_PLUGIN_* from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Executable path for the `NN-name` rule (default process.argv[1]). */
  executable?: string;
  /**
   * What the runtime does when this plugin times out, loses its connection or breaks the
   * protocol (sent in the Configure response; runtimes before NRI v0.12.5 ignore it).
   */
  failurePolicy?: Loose<FailurePolicy>;
  /**
   * Handlers for events the runtime's NRI release does not know: `skip` (the default) leaves
   * them out of the subscription and logs that, unless that would leave none, which fails
   * Configure; `error` fails Configure instead.
   */
  unknownEvents?: "skip" | "error";
  /**
   * Whether, once registered, the plugin (of the default dialect, v1beta1) runs its own serving
   * path (decoding, translation, encoding) on sample requests of the events it subscribed to,
   * never calling its handlers, so that its first real events run optimized code
   * (docs/performance.md, "First events"). One call per turn of the event loop, about 1,200 in
   * all; a real event is served in between. Default false: it holds 31–35 MiB more private memory
   * idle per plugin for first events that were not reliably faster (docs/performance.md).
   */
  warmUp?: boolean;
  /** Where the plugin's messages go; what it leaves out goes to the default: warnings and errors to stderr. */
  log?: Partial<Logger>;
  /**
   * Wrap every call of the runtime, the first outermost (see PluginInterceptor and
   * docs/operations.md); none by default, and then a handler that answers at once is answered
   * with no promise in between.
   */
  interceptors?: readonly PluginInterceptor[];
  /**
   * Prometheus metrics of the plugin's calls and connection (docs/operations.md), registered in
   * prom-client's global registry or the one given; needs prom-client (an optional peer). Off
   * by default.
   */
  prometheus?: boolean | PrometheusOptions;
  /**
   * A span per call, joined to the runtime's trace through the call's `traceparent`; needs
   * @opentelemetry/api (an optional peer) and, to record anything, an SDK. Off by default.
   */
  tracing?: boolean | TracingOptions;
}
