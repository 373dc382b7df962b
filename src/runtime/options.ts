import type { Container, ContainerEviction, ContainerUpdate, PodSandbox } from "../../gen/v1beta1/api_lite.js";
import type { MaybePromise } from "../api/handlers.js";
import { type Logger, resolveLogger } from "../api/logger.js";
import { checkBusyPollMicros } from "../internal/busy-poll.js";
import { oneOf } from "../internal/one-of.js";
import { DEFAULT_SOCKET_PATH, RUNTIME_BUSY_POLL_MICROS } from "../api/socket.js";
import type { BuiltinPlugin } from "./backends.js";
import type { DefaultValidatorConfig } from "./default-validator.js";
import type { Deprecation } from "./deprecation.js";
import { checkHandlers } from "../api/handlers.js";
import type { RuntimeAnswer, RuntimeCall, RuntimeInterceptor } from "./interceptors.js";
import { type RuntimeMetrics, runtimeMetrics } from "./metrics.js";
import { checkInterceptors } from "../internal/interceptor.js";
import { featureOption } from "../internal/optional-peer.js";
import { type PrometheusOptions, prometheusOption } from "../api/prometheus.js";
import type { TracingOptions } from "../api/tracing.js";
import { runtimeChain } from "./runtime-plugin.js";


/** Where the reference looks for pre-installed plugins. */
export const DEFAULT_PLUGIN_PATH = "/opt/nri/plugins";
/** Where the reference looks for pre-installed plugins' configuration. */
export const DEFAULT_PLUGIN_CONFIG_PATH = "/etc/nri/conf.d";
/** How long a plugin may take to register (the reference's default). */
export const DEFAULT_REGISTRATION_TIMEOUT_MS = 5000;
/** How long a plugin may take to answer one request (the reference's default). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 2000;

/**
 * Synchronizes plugins with the runtime's state (the reference's SyncCB): called with every pod
 * and container, resolves with the container updates the plugins asked for.
 */
export type SyncCallback = (pods: PodSandbox[], containers: Container[]) => Promise<ContainerUpdate[]>;

/**
 * The runtime's side of synchronization (the reference's SyncFn): it calls `sync` with its
 * current state, applies the updates it gets back, and resolves. Rejecting refuses a plugin that
 * connects; at start, it fails `start()` for the pre-installed plugins.
 */
export type SyncFn = (sync: SyncCallback) => MaybePromise<void>;

/** Who asked for an unsolicited update. */
export interface UpdateSource {
  /** `NN-name`; `-` when the plugin has not registered yet (its index and name are still empty). */
  readonly plugin: string;
  /** The evictions the plugin asked for in the same request (the reference drops them). */
  readonly evict: readonly ContainerEviction[];
}

/**
 * Applies a plugin's unsolicited container updates (the reference's UpdateFn); resolves with
 * the updates that failed. A rejection reaches the plugin as its call's error.
 */
export type UpdateFn = (updates: ContainerUpdate[], source: UpdateSource) => MaybePromise<ContainerUpdate[] | void>;

/** Options of an NriRuntime; every one has the reference's default. */
export interface RuntimeOptions {
  /** Runtime name and version, sent to plugins in Configure. */
  name: string;
  version: string;
  /** Socket plugins connect to (default /var/run/nri/nri.sock); `false` accepts no connections. */
  socketPath?: string | false;
  /** Mode of the socket file; it never exists with a wider one. Default 0o600. */
  socketMode?: number;
  /** Directory of pre-installed plugins, launched at start (default /opt/nri/plugins). */
  pluginPath?: string;
  /** Directory of their configuration, `NN-name.conf` or `name.conf` (default /etc/nri/conf.d). */
  pluginConfigPath?: string;
  /** How long a plugin may take to register, in ms (default 5000). */
  registrationTimeoutMs?: number;
  /** How long a plugin may take to answer a request, in ms (default 2000). */
  requestTimeoutMs?: number;
  /**
   * Microseconds the event loop keeps polling after a request is sent to a plugin, instead of
   * sleeping until the answer wakes it; only for events back to back (messages none more than
   * 1 ms apart for 10 ms) to a plugin that answered within that time (see "Busy polling" in
   * docs/performance.md). Default 250; 0 turns it off. Events spaced apart never poll.
   */
  busyPollMicros?: number;
  /** In-process plugins, started before the launched ones. */
  builtinPlugins?: readonly BuiltinPlugin[];
  /** The builtin default validator, installed as `00-default-validator` when `enable` is set. */
  defaultValidator?: DefaultValidatorConfig;
  /** Synchronizes each new plugin; default: an empty state, and plugins' updates are dropped. */
  synchronize?: SyncFn;
  /** Unsolicited UpdateContainers; without it plugins get an UNIMPLEMENTED error. */
  updateContainers?: UpdateFn;
  /**
   * What a plugin's error does to StopPodSandbox, RemovePodSandbox, StopContainer and
   * RemoveContainer. `"fail"` (default): the event stops at the first plugin error and fails,
   * as containerd/nri v0.12.5 does. `"continue"`: the error is logged and the event still
   * reaches later plugins and succeeds (the pod sandbox lifecycle contract of containerd/nri
   * PR #286).
   */
  teardownErrors?: "fail" | "continue";
  /** Each deprecation, as it is recorded. */
  onDeprecation?: (d: Deprecation) => void;
  /** The configuration sent in Configure to a plugin that connected by itself; default none, as the reference sends. */
  externalPluginConfig?: (plugin: { readonly name: string; readonly idx: string }) => string;
  /** Where the runtime reports what the reference logs; what it leaves out goes to the default: warnings and errors to stderr. */
  log?: Partial<Logger>;
  /**
   * Wrap every call to every plugin, the first outermost (see RuntimeInterceptor and
   * docs/operations.md); none by default, and then calls go straight to the plugins.
   */
  interceptors?: readonly RuntimeInterceptor[];
  /** Hooks called as containerd/nri's `adaptation.Metrics` is (WithMetrics); none by default. */
  metrics?: RuntimeMetrics;
  /**
   * Prometheus metrics of the calls to plugins (containerd's NRI metrics and more, see
   * docs/operations.md), registered in prom-client's global registry or the one given; needs
   * prom-client (an optional peer). Off by default.
   */
  prometheus?: boolean | PrometheusOptions;
  /**
   * A span per event and per call to a plugin, the call's `traceparent` sent to plugins on a
   * socket; needs @opentelemetry/api (an optional peer) and, to record anything, an SDK. Off by
   * default.
   */
  tracing?: boolean | TracingOptions;
  /**
   * Whether, once started, the runtime relays sample events (a pod's whole life, about 1,200
   * events) through its own relay and merge code to a sample plugin of its own, on a private
   * runtime its plugins never see, so that its first real events run optimized code
   * (docs/performance.md, "First events"). One event per turn of the event loop; a real event is
   * relayed in between. Default false, as a plugin's (docs/performance.md, "First events").
   */
  warmUp?: boolean;
}

/** RuntimeOptions with every default filled in and checked. */
export interface ResolvedOptions {
  readonly name: string;
  readonly version: string;
  readonly socketPath: string | false;
  readonly socketMode: number;
  readonly pluginPath: string;
  readonly pluginConfigPath: string;
  readonly registrationTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly busyPollMicros: number;
  readonly builtinPlugins: readonly BuiltinPlugin[];
  readonly defaultValidator: DefaultValidatorConfig | undefined;
  readonly synchronize: SyncFn;
  readonly updateContainers: UpdateFn | undefined;
  readonly teardownErrors: "fail" | "continue";
  readonly onDeprecation: ((d: Deprecation) => void) | undefined;
  readonly externalPluginConfig: ((plugin: { readonly name: string; readonly idx: string }) => string) | undefined;
  readonly log: Logger;
  /** The metrics hooks, guarded; undefined when there are none (then calls are not measured). */
  metrics: RuntimeMetrics | undefined;
  /** The interceptors around every call to a plugin; undefined when there are none. */
  chain: ((call: RuntimeCall) => Promise<RuntimeAnswer>) | undefined;
  /** The interceptors as given. */
  readonly interceptors: readonly RuntimeInterceptor[] | undefined;
  readonly prometheus: PrometheusOptions | undefined;
  readonly tracing: TracingOptions | undefined;
  readonly warmUp: boolean;
}

function positiveMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0 || value > 0x7fffffff) throw new RangeError(`nri: ${name} ${value} is not a number of ms from 1 to 2147483647`);
  return value;
}

/** Fills in the defaults and checks every limit in one place. */
export function resolveOptions(o: RuntimeOptions): ResolvedOptions {
  const mode = o.socketMode ?? 0o600;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError(`nri: socketMode 0o${mode.toString(8)} is not a permission mode`);
  if (o.teardownErrors !== undefined) oneOf("nri: teardownErrors", o.teardownErrors, ["fail", "continue"]);
  for (const b of o.builtinPlugins ?? []) {
    try {
      checkHandlers(b.handlers);
    } catch (e) {
      throw new TypeError(`nri: builtin plugin ${b.idx}-${b.name}: ${(e as Error).message.replace(/^nri: /u, "")}`, { cause: e });
    }
  }
  const log = resolveLogger(o.log);
  const interceptors = checkInterceptors("nri: interceptors", o.interceptors);
  if (o.metrics !== undefined && (o.metrics === null || typeof o.metrics !== "object")) throw new TypeError(`nri: metrics is a ${o.metrics === null ? "null" : typeof o.metrics}, not an object of hooks`);
  return {
    name: o.name,
    version: o.version,
    socketPath: o.socketPath ?? DEFAULT_SOCKET_PATH,
    socketMode: mode,
    pluginPath: o.pluginPath ?? DEFAULT_PLUGIN_PATH,
    pluginConfigPath: o.pluginConfigPath ?? DEFAULT_PLUGIN_CONFIG_PATH,
    registrationTimeoutMs: positiveMs("registrationTimeoutMs", o.registrationTimeoutMs, DEFAULT_REGISTRATION_TIMEOUT_MS),
    requestTimeoutMs: positiveMs("requestTimeoutMs", o.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS),
    busyPollMicros: checkBusyPollMicros("nri", o.busyPollMicros, RUNTIME_BUSY_POLL_MICROS),
    builtinPlugins: o.builtinPlugins ?? [],
    defaultValidator: o.defaultValidator,
    synchronize: o.synchronize ?? (async (sync) => void (await sync([], []))),
    updateContainers: o.updateContainers,
    warmUp: o.warmUp ?? false,
    teardownErrors: o.teardownErrors ?? "fail",
    onDeprecation: o.onDeprecation,
    externalPluginConfig: o.externalPluginConfig,
    log,
    metrics: runtimeMetrics([o.metrics], log),
    chain: runtimeChain(interceptors),
    interceptors,
    prometheus: prometheusOption(o.prometheus),
    tracing: featureOption("nri: tracing", o.tracing),
  };
}
