import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { clone, create } from "../api/messages.js";
import type { ContainerUpdate, CreateContainerResponse, StopContainerResponse, UpdateContainerResponse, UpdatePodSandboxResponse, ValidateContainerAdjustmentRequest } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { pluginService } from "../api/services.js";
import { TEARDOWN_EVENTS, eventHandlerName } from "../api/events.js";
import { RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";
import { BuiltinBackend, type ConnectionHooks, SocketBackend } from "./backends.js";
import { CreateContainerResult } from "./create-result.js";
import { type Deprecation, stateChangeDeprecation } from "./deprecation.js";
import { DEFAULT_VALIDATOR, defaultValidator } from "./default-validator.js";
import { goQuote } from "../internal/go-quote.js";
import { checkEngine } from "../internal/engine.js";
import { discoverPlugins, launchPlugin } from "./launcher.js";
import { type SafeListener, listenSafely } from "./listener.js";
import { Mutex } from "./mutex.js";
import { type ResolvedOptions, type RuntimeOptions, resolveOptions } from "./options.js";
import type { PluginMethods, PluginRequest, PluginResponse } from "../api/handlers.js";
import { PluginRegistry } from "./plugin-registry.js";
import { type EventMethod, type PluginInfo, RuntimePlugin, runtimeChain } from "./runtime-plugin.js";
import { AdaptationError } from "./errors.js";
import { requestFields } from "../api/logger.js";
import { runtimeMetrics } from "./metrics.js";
import type { RuntimeTracer } from "./tracing.js";
import { addValidationPlugin, completeValidationRequest, validationRequest } from "./validation.js";
import { StopContainerResult, UpdateContainerResult } from "./update-result.js";
import { encodedOnce, leadingFieldOnce, type SharedRequest } from "./shared-payload.js";
import { warmUpRuntime } from "./warm-up.js";

/** A request to an event method: the message or its init shape. */
export type EventRequest<K extends EventMethod> = MessageInitShape<PluginMethods[K]["input"]>;

/** Per-event options (the reference's context). */
export interface EventOptions {
  /**
   * Cancels the event: calls in flight end with `context canceled`, which fails the event
   * without counting against the plugin (a teardown event under `teardownErrors: "continue"`
   * logs it and goes on).
   */
  signal?: AbortSignal;
}

/** Events that the teardown contract (`teardownErrors: "continue"`) never lets a plugin error stop. */
const TEARDOWN: ReadonlySet<string> = new Set(TEARDOWN_EVENTS.map(eventHandlerName));

/** A request the plugins' answers adjust: a copy of its own, so the caller's stays as it was given. */
function ownRequest<K extends EventMethod>(method: K, request: EventRequest<K>): PluginRequest<K> {
  const desc = pluginService[method].input;
  return clone(desc, create(desc, request as never)) as PluginRequest<K>;
}

/**
 * A container runtime's side of NRI, with the semantics of containerd/nri v0.12.5's
 * `pkg/adaptation`: it launches pre-installed plugins and accepts external ones, registers,
 * configures and synchronizes each, and relays every lifecycle event to the plugins in index
 * order, one event at a time, merging their answers and applying their failure policies. Each
 * event method resolves with the merged response or rejects with the Go runtime's error text.
 */
export class NriRuntime {
  private readonly options: ResolvedOptions;
  private readonly registry: PluginRegistry;
  private readonly syncQueue = new Mutex();
  private readonly deprecationList: Deprecation[] = [];
  private readonly owners = new WeakMap<SocketBackend, RuntimePlugin>();
  private readonly pending = new Set<RuntimePlugin>();
  /** What waitForPlugins waits on: checked when plugins come and go, failed when the runtime stops. */
  private readonly waiters = new Map<() => void, (e: Error) => void>();
  private stopping: Promise<void> | undefined;
  private listener: SafeListener | undefined;
  /** Connections accepted before start() has resolved: handled only after it has. */
  private parked: Socket[] | undefined = [];
  private state: "new" | "starting" | "running" | "stopped" = "new";
  /** The span of each event, once start() has set traces up. */
  private tracer: RuntimeTracer | undefined;
  private warming: Promise<void> = Promise.resolve();

  constructor(options: RuntimeOptions) {
    this.options = resolveOptions(options);
    this.registry = new PluginRegistry((count) => this.options.metrics?.updatePluginCount?.(count));
  }

  /** Registered plugins in invocation order (closed ones stay until the next event ends or another plugin joins). */
  get plugins(): readonly PluginInfo[] {
    return this.registry.plugins;
  }

  /**
   * Settles once the started runtime has relayed its sample events (see the `warmUp` option), or
   * at once when it does not.
   */
  get warmedUp(): Promise<void> {
    return this.warming;
  }

  /** Every deprecation recorded so far, in order. */
  get deprecations(): readonly Deprecation[] {
    return this.deprecationList;
  }

  /** The socket plugins connect to, or undefined when external connections are off. */
  get socketPath(): string | undefined {
    return this.options.socketPath === false ? undefined : this.options.socketPath;
  }

  /**
   * Starts builtin and pre-installed plugins, synchronizes them in one call of the
   * synchronize option, then listens for external plugins. Rejects with the reference's text
   * when discovery, a builtin plugin or that synchronization fails; a launched plugin that
   * fails is skipped. A plugin that connects while the socket is being set up waits: no plugin
   * on the socket is registered or synchronized before start() has resolved.
   */
  async start(): Promise<void> {
    if (this.state !== "new") throw new Error(`nri: runtime already ${this.state === "stopped" ? "stopped" : "started"}`);
    checkEngine();
    this.state = "starting";
    await this.observe();
    await this.registry.exclusive(() => this.startPlugins());
    const path = this.options.socketPath;
    if (path !== false) this.listener = await listenSafely(path, this.options.socketMode, (s) => this.connected(s));
    // stop() came while starting: it could not close what did not exist yet.
    if ((this.state as string) === "stopped") {
      await this.listener?.close();
      throw new Error("nri: runtime stopped while starting");
    }
    this.state = "running";
    // After the caller's continuation, which runs in the microtasks that follow this return.
    setImmediate(() => {
      const parked = this.parked ?? [];
      this.parked = undefined;
      for (const s of parked) this.connected(s);
    });
    if (this.options.warmUp) this.warming = this.warmUp();
  }

  /** Relays sample events on a private runtime of the same options (runtime/warm-up.ts). */
  private warmUp(): Promise<void> {
    const o = this.options;
    const quiet = (): void => undefined;
    const peer = new NriRuntime({
      name: o.name,
      version: o.version,
      socketPath: false,
      registrationTimeoutMs: o.registrationTimeoutMs,
      requestTimeoutMs: o.requestTimeoutMs,
      teardownErrors: o.teardownErrors,
      busyPollMicros: 0,
      warmUp: false,
      log: { info: quiet, warn: quiet, error: quiet },
    });
    return warmUpRuntime({
      accept: (conn) => void peer.accept(conn),
      waitForPlugin: () => peer.waitForPlugins(1, o.registrationTimeoutMs),
      relay: (method, request) => (peer[method] as (r: unknown) => Promise<unknown>).call(peer, request),
      stop: () => peer.stop(),
      running: () => this.state === "running",
    });
  }

  /**
   * Sets up what `prometheus` and `tracing` ask for: metrics hooks beside the caller's, traces
   * outside the caller's interceptors. One that cannot be set up (its optional peer is missing,
   * say) is one error line, and the runtime goes on without it.
   */
  private async observe(): Promise<void> {
    const o = this.options;
    if (o.prometheus === undefined && o.tracing === undefined) return;
    const { observeRuntime } = await import("./observe.js");
    const seen = await observeRuntime(o);
    if (seen.metrics !== undefined) o.metrics = runtimeMetrics([o.metrics, seen.metrics], o.log);
    if (seen.tracer !== undefined) {
      this.tracer = seen.tracer;
      o.chain = runtimeChain([seen.tracer.interceptor, ...(o.interceptors ?? [])]);
    }
  }

  /** A connection on the socket: handled once start() has resolved, dropped once stopped. */
  private connected(socket: Socket): void {
    if (this.state === "stopped") socket.destroy();
    else if (this.parked !== undefined) this.parked.push(socket);
    else void this.accept(socket);
  }

  /**
   * Stops listening and closes every plugin, killing those it launched. With a reason, plugins
   * on a socket are first sent Shutdown (the reference only closes the connections). Calling it
   * again returns the same promise; a start() still running rejects, leaving nothing listening.
   */
  stop(shutdownReason?: string): Promise<void> {
    return (this.stopping ??= this.stopOnce(shutdownReason));
  }

  private async stopOnce(shutdownReason: string | undefined): Promise<void> {
    this.state = "stopped";
    for (const s of this.parked ?? []) s.destroy();
    this.parked = undefined;
    for (const [check, fail] of [...this.waiters]) {
      this.waiters.delete(check);
      fail(new Error("nri: runtime stopped"));
    }
    await this.listener?.close();
    const plugins = await this.registry.exclusive(async () => this.registry.clear());
    const all = [...plugins, ...this.pending];
    if (shutdownReason !== undefined) await Promise.all(all.filter((p) => p.kind !== "builtin" && !p.closed).map((p) => p.shutdown(shutdownReason)));
    await Promise.all(all.map((p) => p.stop()));
  }

  /** Resolves once at least `n` plugins are registered and open; rejects after `timeoutMs`, or when the runtime stops. */
  waitForPlugins(n: number, timeoutMs = 30_000): Promise<void> {
    const ready = (): boolean => this.registry.plugins.filter((p) => !p.closed).length >= n;
    if (ready()) return Promise.resolve();
    if (this.state === "stopped") return Promise.reject(new Error("nri: runtime stopped"));
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!ready()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`nri: ${this.registry.plugins.length} of ${n} plugins registered after ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(check, (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  /** RunPodSandbox: relayed in order; the first failure fails it. */
  runPodSandbox(request: EventRequest<"runPodSandbox">, o?: EventOptions): Promise<void> {
    return this.relayAll("runPodSandbox", request, o);
  }

  /** UpdatePodSandbox: relayed in order; the response is always empty. */
  async updatePodSandbox(request: EventRequest<"updatePodSandbox">, o?: EventOptions): Promise<UpdatePodSandboxResponse> {
    await this.relayAll("updatePodSandbox", request, o);
    return create(v1beta1.UpdatePodSandboxResponse);
  }

  /** PostUpdatePodSandbox: relayed in order; the first failure fails it. */
  postUpdatePodSandbox(request: EventRequest<"postUpdatePodSandbox">, o?: EventOptions): Promise<void> {
    return this.relayAll("postUpdatePodSandbox", request, o);
  }

  /** StopPodSandbox: relayed in order; the first failure fails it unless `teardownErrors` is "continue". */
  stopPodSandbox(request: EventRequest<"stopPodSandbox">, o?: EventOptions): Promise<void> {
    return this.relayAll("stopPodSandbox", request, o);
  }

  /** RemovePodSandbox: relayed in order; the first failure fails it unless `teardownErrors` is "continue". */
  removePodSandbox(request: EventRequest<"removePodSandbox">, o?: EventOptions): Promise<void> {
    return this.relayAll("removePodSandbox", request, o);
  }

  /**
   * CreateContainer: each plugin gets the container as adjusted by the plugins before it; the
   * answers are merged with ownership; then, if there are validators, all of them check the
   * merged adjustment at once. Resolves with the merged adjustment and updates.
   */
  createContainer(request: EventRequest<"createContainer">, o: EventOptions = {}): Promise<CreateContainerResponse> {
    const req = ownRequest("createContainer", request);
    return this.event("CreateContainer", req, async () => {
      const result = new CreateContainerResult(req);
      // No answer changes the pod: its bytes are encoded once for all the plugins.
      const shared = leadingFieldOnce(pluginService.createContainer.input, req, "pod");
      const validators = this.registry.validators;
      const validate = validators.length === 0 ? undefined : validationRequest(req);
      await this.relayEach(
        "createContainer",
        req,
        o.signal,
        (p, res) => {
          // The reference lists a plugin before calling it; a call that throws fails the event, so
          // listing it after its answer gives the same list.
          if (validate !== undefined) addValidationPlugin(validate, p.idx, p.name);
          result.apply(p.id, res);
        },
        shared,
      );
      const response = result.response();
      if (validate === undefined) return response;
      completeValidationRequest(validate, result);
      // All at once, as the reference does; of several failures the first in plugin order wins.
      const verdicts = await Promise.all(validators.filter((v) => !v.closed).map((v) => v.validate(validate, o.signal)));
      const failed = verdicts.find((v) => v !== undefined);
      if (failed !== undefined) throw failed;
      return response;
    });
  }

  /** PostCreateContainer: relayed in order; the first failure fails it. */
  postCreateContainer(request: EventRequest<"postCreateContainer">, o?: EventOptions): Promise<void> {
    return this.relayAll("postCreateContainer", request, o);
  }

  /** StartContainer: relayed in order; the first failure fails it. */
  startContainer(request: EventRequest<"startContainer">, o?: EventOptions): Promise<void> {
    return this.relayAll("startContainer", request, o);
  }

  /** PostStartContainer: relayed in order; the first failure fails it. */
  postStartContainer(request: EventRequest<"postStartContainer">, o?: EventOptions): Promise<void> {
    return this.relayAll("postStartContainer", request, o);
  }

  /** UpdateContainer: the plugins' updates merged with ownership, the target's own entry last. */
  updateContainer(request: EventRequest<"updateContainer">, o: EventOptions = {}): Promise<UpdateContainerResponse> {
    const req = ownRequest("updateContainer", request);
    return this.event("UpdateContainer", req, async () => {
      const result = new UpdateContainerResult(req);
      await this.relayEach("updateContainer", req, o.signal, (p, res) => result.apply(p.id, res));
      return result.response();
    });
  }

  /** PostUpdateContainer: relayed in order; the first failure fails it. */
  postUpdateContainer(request: EventRequest<"postUpdateContainer">, o?: EventOptions): Promise<void> {
    return this.relayAll("postUpdateContainer", request, o);
  }

  /** StopContainer: the plugins' updates of any container (the stopped one included), merged with ownership. */
  stopContainer(request: EventRequest<"stopContainer">, o: EventOptions = {}): Promise<StopContainerResponse> {
    const req = ownRequest("stopContainer", request);
    return this.event("StopContainer", req, async () => {
      const result = new StopContainerResult();
      await this.relayEach("stopContainer", req, o.signal, (p, res) => result.apply(p.id, res));
      return result.response();
    });
  }

  /** RemoveContainer: relayed in order; the first failure fails it unless `teardownErrors` is "continue". */
  removeContainer(request: EventRequest<"removeContainer">, o?: EventOptions): Promise<void> {
    return this.relayAll("removeContainer", request, o);
  }

  /**
   * Runs one event (`method`, its wire name) holding the event lock, inside its span when traces
   * are on; closed plugins are dropped (and stopped) after it.
   */
  private event<T>(method: string, request: unknown, run: () => Promise<T>): Promise<T> {
    const tracer = this.tracer;
    return this.registry.exclusive(async () => {
      try {
        return await (tracer === undefined ? run() : tracer.event(method, request, run));
      } finally {
        for (const p of this.registry.removeClosed()) void p.stop();
      }
    });
  }

  /** An event without an answer to merge: relayed in order, the first failure fails it. */
  private relayAll<K extends EventMethod>(method: K, request: EventRequest<K>, o: EventOptions = {}): Promise<void> {
    const desc = pluginService[method];
    // No answer changes these requests: no copy is needed, and the bytes are shared by all plugins.
    const req = create(desc.input, request as never) as never;
    const shared = encodedOnce(desc.input, req);
    return this.event(desc.name, req, () => this.relayEach(method, req, o.signal, undefined, shared));
  }

  /**
   * The relay of every event: each open plugin in order gets `req` (sent as `shared` when the
   * event encoded it once), and `merge` its answer. Under the teardown contract a teardown event
   * logs a plugin's failure (its merge's too) and goes on. Per plugin this costs the relay alone:
   * no closure, no extra await.
   */
  private async relayEach<K extends EventMethod>(
    method: K,
    req: PluginRequest<K>,
    signal: AbortSignal | undefined,
    merge?: (p: RuntimePlugin, res: PluginResponse<K> | undefined) => void,
    shared?: SharedRequest,
  ): Promise<void> {
    const goesOn = this.options.teardownErrors === "continue" && TEARDOWN.has(method);
    for (const p of this.registry.plugins) {
      if (p.closed) continue;
      try {
        const res = await p.relay(method, req, signal, shared);
        if (merge !== undefined) this.merge(merge, p, res, method);
      } catch (e) {
        if (!goesOn) throw e;
        this.options.log.warn(`plugin ${p.id} failed ${pluginService[method].name}, teardown goes on: ${(e as Error).message}`, requestFields(p.id, pluginService[method].name, req));
      }
    }
  }

  /** Merges an answer; a refusal of the merge is counted for the metrics hooks. */
  private merge<K extends EventMethod>(merge: (p: RuntimePlugin, res: PluginResponse<K> | undefined) => void, p: RuntimePlugin, res: PluginResponse<K> | undefined, method: K): void {
    try {
      merge(p, res);
    } catch (e) {
      if (e instanceof AdaptationError) this.options.metrics?.recordMergeConflict?.(p.id, pluginService[method].name, e);
      throw e;
    }
  }

  /** The reference's startPlugins: builtins, then launched plugins, then one synchronization. */
  private async startPlugins(): Promise<void> {
    const started: RuntimePlugin[] = [];
    try {
      await this.startBuiltins(started);
      await this.launchPreinstalled(started);
      await this.synchronizeStarted(started);
    } catch (e) {
      await Promise.all(started.map((p) => p.stop()));
      throw e;
    }
    for (const p of started) this.pending.delete(p);
    for (const p of this.registry.add(...started)) void p.stop();
    this.notify();
  }

  /** The builtin plugins (the default validator first, when enabled); any failure fails the start. */
  private async startBuiltins(started: RuntimePlugin[]): Promise<void> {
    const o = this.options;
    const builtins = [...o.builtinPlugins];
    if (o.defaultValidator?.enable === true) {
      const check = defaultValidator(o.defaultValidator);
      // As a builtin's error becomes a rejection, its rejection reason travels as the error.
      const validateContainerAdjustment = (req: ValidateContainerAdjustmentRequest): void => {
        const verdict = check(req);
        if (verdict.reject) throw new Error(verdict.reason);
      };
      builtins.unshift({ ...DEFAULT_VALIDATOR, handlers: { validateContainerAdjustment } });
    }
    for (const b of builtins) {
      o.log.info(`starting builtin NRI plugin ${goQuote(`${b.idx}-${b.name}`)}...`);
      if (b.name === "" || b.idx === "") throw new Error(`failed to initialize builtin NRI plugin ${goQuote(b.name)}: builtin plugin without index or name (${goQuote(b.idx)}, ${goQuote(b.name)})`);
      const p = new RuntimePlugin(new BuiltinBackend(b), b.idx, b.name, "", o);
      await p.start().catch((e: Error) => {
        throw new Error(`failed to start builtin NRI plugin ${goQuote(b.name)}: ${e.message}`, { cause: e });
      });
      started.push(p);
    }
  }

  /** The pre-installed plugins of the plugin directory; one that fails is skipped with a warning. */
  private async launchPreinstalled(started: RuntimePlugin[]): Promise<void> {
    const o = this.options;
    for (const d of await discoverPlugins(o.pluginPath, o.pluginConfigPath)) {
      o.log.info(`starting pre-installed NRI plugin ${goQuote(d.base)}...`);
      let p: RuntimePlugin;
      try {
        const { child, socket } = await launchPlugin(o.pluginPath, d.idx, d.base);
        p = new RuntimePlugin(this.connect(socket, "pre-connected"), d.idx, d.base, d.config, o, child);
        this.track(p);
      } catch (e) {
        o.log.warn(`failed to initialize pre-installed NRI plugin ${goQuote(d.base)}: ${(e as Error).message}`);
        continue;
      }
      try {
        await p.start();
      } catch (e) {
        void p.stop();
        o.log.warn(`failed to start pre-installed NRI plugin ${goQuote(d.base)}: ${(e as Error).message}`);
        continue;
      }
      started.push(p);
    }
  }

  /**
   * One synchronization of everything started, through the runtime's SyncFn; a plugin that fails
   * it is dropped from `started` with a warning, a SyncFn that rejects fails the start.
   */
  private async synchronizeStarted(started: RuntimePlugin[]): Promise<void> {
    const log = this.options.log;
    const sync = async (pods: Parameters<RuntimePlugin["synchronize"]>[0], containers: Parameters<RuntimePlugin["synchronize"]>[1]): Promise<ContainerUpdate[]> => {
      const updates: ContainerUpdate[] = [];
      for (const p of started.splice(0)) {
        try {
          updates.push(...(await p.synchronize(pods, containers)));
        } catch (e) {
          void p.stop();
          log.warn(`failed to synchronize pre-installed NRI plugin ${goQuote(p.id)}: ${(e as Error).message}`);
          continue;
        }
        started.push(p);
        log.info(`pre-installed NRI plugin ${goQuote(p.id)} synchronization success`);
      }
      return updates;
    };
    try {
      await this.options.synchronize(sync);
    } catch (e) {
      throw new Error(`failed to synchronize pre-installed NRI Plugins: ${(e as Error).message}`, { cause: e });
    }
  }

  /** An external plugin: register and configure it, then synchronize it and let it join. */
  private async accept(socket: Duplex): Promise<void> {
    const p = new RuntimePlugin(this.connect(socket, "external"), "", "", "", this.options);
    this.track(p);
    const log = this.options.log;
    try {
      await p.start();
    } catch (e) {
      // It stays pending (stop() reaches it) until its connection ends.
      log.error(`failed to start external plugin: ${(e as Error).message}`);
      return;
    }
    // One plugin at a time is synchronized and joins, as the reference does.
    await this.syncQueue.run(async () => {
      try {
        await this.options.synchronize((pods, containers) => p.synchronize(pods, containers));
      } catch (e) {
        log.error(`failed to synchronize plugin: ${(e as Error).message}`);
        p.close();
        this.pending.delete(p);
        return;
      }
      await this.registry.exclusive(async () => {
        this.pending.delete(p);
        if (this.state === "stopped") return void p.stop();
        for (const dropped of this.registry.add(p)) void dropped.stop();
      });
      // Go counts once as it sorts and again after: both calls, for hooks that count calls.
      if (this.state !== "stopped") this.options.metrics?.updatePluginCount?.(this.registry.plugins.length);
      log.info(`plugin ${goQuote(p.id)} connected and synchronized`);
      this.notify();
    });
  }

  private connect(socket: Duplex, kind: "external" | "pre-connected"): SocketBackend {
    return new SocketBackend(socket, kind, this.hooks, this.options.busyPollMicros);
  }

  /** A plugin not yet in the registry, so that stop() reaches it too. */
  private track(p: RuntimePlugin): void {
    if (p.backend instanceof SocketBackend) this.owners.set(p.backend, p);
    this.pending.add(p);
    void p.backend.closed.then(() => {
      this.pending.delete(p);
      this.notify();
    });
  }

  private notify(): void {
    for (const w of [...this.waiters.keys()]) w();
  }

  private readonly hooks: ConnectionHooks = {
    updateContainers: async (conn, update, evict) => {
      const plugin = this.owners.get(conn)?.id ?? "";
      const fn = this.options.updateContainers;
      if (fn === undefined) throw new RpcError(Code.UNIMPLEMENTED, "runtime takes no unsolicited container updates: it has no update callback");
      this.options.log.info(`plugin ${goQuote(plugin)} requested container updates`);
      return (await fn(update, { plugin, evict })) ?? [];
    },
    deprecated: (conn, event) => {
      const plugin = this.owners.get(conn);
      if (plugin === undefined) return;
      const d = stateChangeDeprecation(plugin.id, event);
      this.deprecationList.push(d);
      this.options.log.warn(`plugin ${plugin.id} uses deprecated StateChange instead of a dedicated ${event} RPC call`);
      this.options.onDeprecation?.(d);
    },
  };
}
