import type { Duplex } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ConfigureRequest, ConfigureResponse, Container, ContainerEviction, ContainerUpdate, PodSandbox, ShutdownRequest, SynchronizeRequest } from "../../gen/v1beta1/api_lite.js";
import { decodeUpdateContainersResponse, encodeRegisterPluginRequest, encodeUpdateContainersRequest, messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { callError } from "../api/errors.js";
import { eventsKnownBy, NRI_VERSION } from "../api/releases.js";
import { eventOfMethod, formatEventMask } from "../api/events.js";
import { type HandlerContext, type PluginHandlers, type PluginMethodName, checkHandlers, eventsOf } from "../api/handlers.js";
import { type PluginIdentity, pluginId, resolveIdentity } from "../api/identity.js";
import { type Logger, requestFields, resolveLogger } from "../api/logger.js";
import { type Loose, toMessage } from "../api/loose.js";
import { DIALECTS, type Dialect, type Revision, packages } from "../api/revision.js";
import { oneOf } from "../internal/one-of.js";
import { DEFAULT_SOCKET_PATH, PLUGIN_BUSY_POLL_MICROS, connectUnix, inheritedSocket } from "../api/socket.js";
import { checkBusyPollMicros } from "../internal/busy-poll.js";
import { CloseOnce } from "../internal/close-once.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { Client } from "../ttrpc/client.js";
import { ClosedError, RpcError } from "../ttrpc/errors.js";
import { type CallContext, type RawMethod, Server } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import { runtimeOf, subscription } from "./configure.js";
import { type PluginMethod, type Translation, invoke, isThenable, loadedTranslation, pluginMethods, translation } from "./methods.js";
import type { PluginAnswer, PluginCall, PluginInterceptor } from "./interceptors.js";
import { chainInterceptors, checkInterceptors } from "../internal/interceptor.js";
import { pluginService } from "../api/services.js";
import { featureOption } from "../internal/optional-peer.js";
import type { PluginObserver } from "./observer.js";
import { type PrometheusOptions, prometheusOption } from "../api/prometheus.js";
import type { TracingOptions } from "../api/tracing.js";
import type { PluginOptions, RuntimeInfo } from "./options.js";
import { errorText } from "../internal/error-text.js";
import { checkEngine } from "../internal/engine.js";
import { WARM_UP_HANDLERS, warmUp } from "./warm-up.js";

/**
 * This package's source directory (src/ or dist/src/): frames in it are nri-wire's, not the
 * plugin's. Undefined in a bundle, where the plugin's code and nri-wire's are one file.
 */
function ownSources(): string | undefined {
  // A CommonJS bundle (a built executable's) has no import.meta.url.
  const url = (import.meta as { url?: string }).url;
  return url === undefined || !url.startsWith("file:") ? undefined : fileURLToPath(new URL("..", url));
}

/**
 * The `at ...` lines of an error's stack, each on a line of its own, without the calls that led
 * to the handler (nri-wire's dispatch and Node's): where the plugin's code threw. "" when none.
 */
function stackFrames(e: unknown): string {
  const stack = e instanceof Error ? e.stack : undefined;
  if (stack === undefined) return "";
  const frames = stack.split("\n").filter((l) => /^\s+at /u.test(l));
  const own = ownSources();
  const ours = (l: string): boolean => (own !== undefined && (l.includes(own) || l.includes(pathToFileURL(own).href))) || /[( ]node:/u.test(l);
  let last = frames.length - 1;
  while (last >= 0 && ours(frames[last]!)) last--;
  const kept = last < 0 ? frames : frames.slice(0, last + 1);
  return kept.length === 0 ? "" : `\n${kept.join("\n")}`;
}

/**
 * A plugin's side of an NRI connection. Serves the Plugin service under both package names with
 * the default dialect (so runtimes of either revision work), registers itself, and hands every
 * call to the handlers in v1beta1 form. It never exits the process: the end of the connection is
 * reported through `closed` and `onClose`.
 */
export class NriPlugin {
  readonly identity: PluginIdentity;
  /** The events the handlers cover; the subscription may be narrower (see `subscribed`). */
  readonly events: number;
  /** The connection the runtime's calls come in on. */
  private served: ReturnType<Server["serve"]> | undefined;
  private readonly handlers: PluginHandlers;
  private readonly options: PluginOptions;
  /** The busy-polling window in use, in microseconds: the `busyPollMicros` option or its default. */
  readonly busyPollMicros: number;
  private readonly dialect: Dialect;
  private readonly log: Logger;
  private mux: Mux | undefined;
  private runtimeClient: Client | undefined;
  private runtimeApi: Revision | undefined;
  private runtimeInfo: RuntimeInfo | undefined;
  private subscribedMask: number | undefined;
  private syncPods: PodSandbox[] = [];
  private syncContainers: Container[] = [];
  private configured = false;
  /** Why setup failed on our side (Configure or the first Synchronize), if it did. */
  private configureError: Error | undefined;
  private isSynchronized = false;
  /** What `closed` reports once the runtime, having sent Shutdown, closes the connection. */
  private shutdownBy: string | undefined;
  private synchronized!: () => void;
  private readonly synchronizedPromise = new Promise<void>((r) => (this.synchronized = r));
  private readonly shut = new CloseOnce();
  /** The plugin as interceptors see it. */
  private readonly who: PluginCall["plugin"];
  private readonly interceptors: readonly PluginInterceptor[] | undefined;
  /** The interceptors around every call, or undefined when there are none: calls then go straight to the handlers. */
  private chain: ((call: PluginCall) => Promise<PluginAnswer>) | undefined;
  /** What the options ask operators to see: Prometheus metrics, traces. */
  private readonly observing: { readonly prometheus: PrometheusOptions | undefined; readonly tracing: TracingOptions | undefined };
  /** Their observers, once start() has set them up. */
  private observers: readonly PluginObserver[] = [];
  /** Settles with the reason once the connection to the runtime has ended. */
  readonly closed: Promise<Error> = this.shut.closed;
  /**
   * Settles once the plugin, registered, has run its own serving path on sample requests
   * (see the `warmUp` option), or at once when it does not.
   */
  get warmedUp(): Promise<void> {
    return this.warming;
  }
  private warming: Promise<void> = Promise.resolve();

  private startCalled = false;

  /** Throws when a handler key names no Plugin method, with the nearest name (see checkHandlers). */
  constructor(handlers: PluginHandlers, options: PluginOptions = {}) {
    checkHandlers(handlers);
    this.handlers = handlers;
    this.options = options;
    this.dialect = options.dialect === undefined ? "v1beta1" : oneOf("nri: dialect", options.dialect, DIALECTS);
    this.busyPollMicros = checkBusyPollMicros("nri", options.busyPollMicros, PLUGIN_BUSY_POLL_MICROS);
    this.log = resolveLogger(options.log);
    this.identity = resolveIdentity({
      name: options.name,
      idx: options.idx,
      env: options.env ?? process.env,
      executable: options.executable ?? process.argv[1],
    });
    this.events = eventsOf(handlers);
    this.who = Object.freeze({ idx: this.identity.idx, name: this.identity.name, id: pluginId(this.identity) });
    this.interceptors = checkInterceptors("nri: interceptors", options.interceptors);
    this.chain = chainInterceptors(this.interceptors, this.last);
    this.observing = { prometheus: prometheusOption(options.prometheus), tracing: featureOption("nri: tracing", options.tracing) };
  }

  /** `NN-name`. */
  get id(): string {
    return pluginId(this.identity);
  }

  /** The runtime, once it has configured the plugin. */
  get runtime(): RuntimeInfo | undefined {
    return this.runtimeInfo;
  }

  /** The event mask sent to the runtime, once configured. */
  get subscribed(): number | undefined {
    return this.subscribedMask;
  }

  /**
   * Connects, serves, registers, and resolves once the runtime has configured and synchronized
   * the plugin; rejects (and closes) if that fails or takes longer than the registration timeout.
   */
  async start(): Promise<void> {
    if (this.startCalled) throw new Error(`nri: plugin ${this.id}: start() called twice`);
    this.startCalled = true;
    // Closed (or stopped) before start: nothing to connect.
    if (this.shut.reason !== undefined) throw this.shut.reason;
    await this.observe();
    let socket: Duplex;
    let stateChangeMethods: readonly string[] | undefined;
    try {
      checkEngine();
      // Before connecting: nothing may come between the mux's creation and the server's.
      stateChangeMethods = this.dialect === "statechange" ? (await translation()).stateChangePluginMethods : undefined;
      const env = this.options.env ?? process.env;
      socket =
        this.options.socket ??
        (this.options.socketPath === undefined ? inheritedSocket(env) : undefined) ??
        (await connectUnix(this.options.socketPath ?? DEFAULT_SOCKET_PATH));
    } catch (e) {
      // No connection, so no mux to report the end: `closed` settles with what start() rejects with.
      this.finish(e as Error);
      throw e;
    }
    // close() or stop() came while connecting.
    if (this.shut.reason !== undefined) {
      socket.destroy();
      throw this.shut.reason;
    }
    const mux = new Mux(socket, { busyPollMicros: this.busyPollMicros });
    this.mux = mux;
    void mux.closed.then((reason) => this.finish(reason));
    // Serve before registering: the runtime may send Configure before it answers RegisterPlugin.
    this.served = this.serve(stateChangeMethods).serve(mux.open(PLUGIN_SERVICE_CONN));
    this.runtimeClient = new Client(mux.open(RUNTIME_SERVICE_CONN));
    const timeoutMs = this.options.registrationTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`nri: plugin ${this.id}: registration timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    const closedEarly = this.closed.then((r) => Promise.reject(r));
    try {
      await Promise.race([this.register(), timedOut, closedEarly]);
      await Promise.race([this.synchronizedPromise, timedOut, closedEarly]);
      for (const o of this.observers) o.registered?.(this.id, this.runtimeInfo!);
    } catch (e) {
      this.close(e as Error);
      throw this.shut.reason ?? e;
    } finally {
      clearTimeout(timer);
    }
    if (this.options.warmUp === true && this.dialect === "v1beta1") {
      this.warming = warmUp({
        serve: (conn) => void this.serve(stateChangeMethods, WARM_UP_HANDLERS).serve(conn),
        events: this.subscribedMask ?? 0,
        revision: this.runtimeApi!,
        open: () => this.shut.reason === undefined,
      });
    }
  }

  /** Sets up what `prometheus` and `tracing` ask for, outside the user's interceptors. */
  private async observe(): Promise<void> {
    const o = this.observing;
    if (o.prometheus !== undefined || o.tracing !== undefined) {
      const { pluginObservers } = await import("./observe.js");
      this.observers = await pluginObservers(o, this.id, this.log);
      const outer = this.observers.flatMap((ob) => (ob.interceptor === undefined ? [] : [ob.interceptor]));
      if (outer.length > 0) this.chain = chainInterceptors([...outer, ...(this.interceptors ?? [])], this.last);
    }
    for (const ob of this.observers) ob.connecting?.(this.id);
  }

  private async register(): Promise<void> {
    const payload = encodeRegisterPluginRequest({ pluginName: this.identity.name, pluginIdx: this.identity.idx, NRIVersion: NRI_VERSION });
    const client = this.runtimeClient!;
    if (this.dialect === "v1beta1") {
      try {
        await client.call(`${packages.v1beta1}.Runtime`, "RegisterPlugin", payload);
        this.runtimeApi = "v1beta1";
        return;
      } catch (e) {
        if (!(e instanceof RpcError && e.code === Code.UNIMPLEMENTED)) {
          throw callError(`nri: plugin ${this.id}: registration failed`, e);
        }
      }
    }
    // A v1alpha1 runtime's calls all need translation: load it while registration is in flight.
    translation().catch(() => undefined); // a failure surfaces where the module is used
    try {
      await client.call(`${packages.v1alpha1}.Runtime`, "RegisterPlugin", payload);
      this.runtimeApi = "v1alpha1";
    } catch (e) {
      throw callError(`nri: plugin ${this.id}: registration failed`, e);
    }
  }

  /**
   * Asks the runtime, unprompted, to update or evict containers; resolves with the updates it
   * could not apply.
   */
  async updateContainers(update: readonly Loose<ContainerUpdate>[] = [], evict: readonly Loose<ContainerEviction>[] = []): Promise<ContainerUpdate[]> {
    const client = this.runtimeClient;
    if (client === undefined || this.runtimeApi === undefined) throw new Error(`nri: plugin ${this.id}: not registered`);
    const api = this.runtimeApi;
    try {
      let payload: Uint8Array;
      try {
        payload = encodeUpdateContainersRequest(toMessage(v1beta1.UpdateContainersRequest, { update: [...update], evict: [...evict] }));
      } catch (e) {
        throw new RpcError(Code.INVALID_ARGUMENT, `cannot encode nri.pkg.api.v1beta1.UpdateContainersRequest: ${errorText(e)}`, { cause: e });
      }
      const res = await client.call(`${packages[api]}.Runtime`, "UpdateContainers", payload);
      try {
        return decodeUpdateContainersResponse(res).failed;
      } catch (e) {
        throw new RpcError(Code.INVALID_ARGUMENT, errorText(e), { cause: e });
      }
    } catch (e) {
      throw callError(`nri: plugin ${this.id}: UpdateContainers`, e);
    }
  }

  /**
   * Closes the connection at once; `closed` and onClose report `reason` (before the plugin is
   * synchronized, its Configure or Synchronize error or the runtime's refusal instead; after a
   * Shutdown, the Shutdown). Answers still queued are lost: from a handler (say, Shutdown's) use
   * stop().
   */
  close(reason: Error = new Error(`nri: plugin ${this.id}: closed`)): void {
    if (this.mux !== undefined) this.mux.close(reason);
    else this.finish(reason);
  }

  /**
   * Closes the connection once the answers to the calls in flight are written, so a handler may
   * end the plugin (Shutdown's, typically) without cutting off its own answer; the runtime's new
   * calls are refused meanwhile. After `graceMs` it closes as close() does. Settles like `closed`.
   */
  stop(reason: Error = new Error(`nri: plugin ${this.id}: stopped`), graceMs = 1000): Promise<Error> {
    const mux = this.mux;
    const served = this.served;
    if (mux === undefined || served === undefined) {
      this.close(reason);
      return this.closed;
    }
    const timer = setTimeout(() => this.close(reason), graceMs);
    void this.closed.then(() => clearTimeout(timer));
    void served.closeWhenIdle().then(() => mux.end(reason));
    return this.closed;
  }

  private finish(reason: Error): void {
    if (this.shut.reason !== undefined) return;
    // After an orderly Shutdown, the runtime closing the connection is that shutdown.
    const why = this.shutdownBy !== undefined && reason instanceof ClosedError ? new Error(this.shutdownBy, { cause: reason }) : this.explainEarlyClose(reason);
    this.shut.begin(why);
    for (const o of this.observers) o.closed?.(this.id);
    // Our own setup errors were logged where they happened; a refusal is news.
    if (why !== reason && why !== this.configureError) this.log.error(why.message);
    this.shut.settle();
    this.options.onClose?.(why);
  }

  /**
   * A connection that ends between Configure and Synchronize ended because of the configuration:
   * say so, with our own Configure error or the likely reason the runtime refused it.
   */
  private explainEarlyClose(reason: Error): Error {
    if (this.isSynchronized) return reason;
    if (this.configureError !== undefined) return this.configureError;
    if (!this.configured) return reason;
    return new Error(`nri: plugin ${this.id}: the runtime closed the connection right after Configure: it refused the configuration; likely cause: ${this.likelyRefusal()}`, { cause: reason });
  }

  private likelyRefusal(): string {
    const rt = this.runtimeInfo;
    const mask = this.subscribedMask ?? 0;
    const newer = mask & ~(eventsKnownBy("v0.9.0") ?? 0);
    if (rt?.nriVersion === undefined && newer !== 0) {
      return `its NRI version is unknown and runtimes before NRI v0.10.0 refuse events they do not know; subscribed ${formatEventMask(newer)} (0x${newer.toString(16)}) may be among them (see the runtime's log for "invalid plugin events")`;
    }
    const where = rt === undefined ? "" : ` of ${rt.name} ${rt.version}`;
    return `not one the plugin can tell (subscribed 0x${mask.toString(16)}${rt?.nriVersion === undefined ? "" : `, runtime NRI ${rt.nriVersion}`}); the log${where} says why`;
  }

  /** The ttrpc server of conn 1: v1beta1 and/or v1alpha1 Plugin services per the dialect, calling `handlers`' events. */
  private serve(stateChangePluginMethods: readonly string[] | undefined, handlers: PluginHandlers = this.handlers): Server {
    const server = new Server();
    if (this.dialect === "v1beta1") {
      const beta: Record<string, RawMethod> = {};
      for (const name of pluginMethods.keys()) beta[name] = { kind: "unary", handler: (payload, ctx) => this.dispatch(name, payload, ctx, "v1beta1", handlers) };
      server.register(`${packages.v1beta1}.Plugin`, beta);
    }
    const alphaService = `${packages.v1alpha1}.Plugin`;
    const alpha: Record<string, RawMethod> = {};
    const names = stateChangePluginMethods ?? [...pluginMethods.keys(), "StateChange"];
    for (const name of names) {
      // Once translation is loaded (registration loads it), an answer given at once is
      // translated and returned at once, as a v1beta1 call's is.
      const ref = { service: alphaService, method: name };
      const translated = (t: Translation, payload: Uint8Array, ctx: CallContext): Uint8Array | Promise<Uint8Array> => {
        const call = t.toV1beta1({ service: alphaService, method: name, payload });
        const answer = this.dispatch(call.method, call.payload, ctx, "v1alpha1", handlers);
        if (!isThenable(answer)) return t.responseToV1alpha1(ref, answer).payload;
        return Promise.resolve(answer).then((a) => t.responseToV1alpha1(ref, a).payload);
      };
      alpha[name] = {
        kind: "unary",
        handler: (payload, ctx) => {
          const t = loadedTranslation();
          return t !== undefined ? translated(t, payload, ctx) : translation().then((loaded) => translated(loaded, payload, ctx));
        },
      };
    }
    server.register(alphaService, alpha);
    return server;
  }

  /** Handles one v1beta1 Plugin call that came in as a call of revision `via`; events go to `handlers`. */
  private dispatch(method: string, payload: Uint8Array, ctx: CallContext, via: Revision, handlers: PluginHandlers): Uint8Array | Promise<Uint8Array> {
    const desc = pluginMethods.get(method);
    if (desc === undefined) throw new RpcError(Code.UNIMPLEMENTED, `method ${method}`);
    const chain = this.chain;
    // The warm-up's calls (handlers of its own) pass no interceptor either: those are the user's code too.
    if (chain !== undefined && handlers === this.handlers) return invoke(desc, payload, (request) => chain(this.callOf(desc, request, ctx, via)));
    return invoke(desc, payload, (request) => this.handle(desc, request, ctx, via, handlers));
  }

  /** A call as interceptors see it. */
  private callOf(desc: PluginMethod, request: never, ctx: CallContext, via: Revision): PluginCall {
    const event = desc.name === "ValidateContainerAdjustment" ? undefined : eventOfMethod(desc.name);
    return { method: desc.localName as PluginMethodName, event, revision: via, plugin: this.who, request, ctx, metadata: ctx.metadata } as PluginCall;
  }

  /** The interceptors' last step: the plugin's own part of a call and its handler. */
  private readonly last = (call: PluginCall): Promise<PluginAnswer> => {
    const desc = pluginService[call.method] as PluginMethod;
    return Promise.resolve(this.handle(desc, call.request as never, call.ctx, call.revision, this.handlers) as PluginAnswer);
  };

  /** The plugin's own part of a call (Configure's subscription, Synchronize's pages) and its handler of `handlers`. */
  private handle(desc: PluginMethod, req: never, ctx: HandlerContext, via: Revision, handlers: PluginHandlers): unknown {
    const method = desc.name;
    switch (method) {
      case "Configure":
        return this.configure(req, ctx, via);
      case "Synchronize":
        return this.synchronizeOnce(req, ctx);
      case "Shutdown": {
        const handler = this.handlers.shutdown;
        const reason = (req as ShutdownRequest).reason;
        this.shutdownBy = `nri: plugin ${this.id}: shut down by the runtime${reason === "" ? "" : `: ${reason}`}`;
        return handler === undefined ? undefined : this.guard(method, () => handler(req, ctx), req);
      }
      default: {
        // Events without a handler (the runtime should not send them) get the empty answer.
        const handler = (handlers as Record<string, ((req: never, ctx: HandlerContext) => unknown) | undefined>)[desc.localName];
        return handler === undefined ? undefined : this.guard(method, () => handler(req, ctx), req);
      }
    }
  }

  /**
   * Runs a handler; its error is logged and travels to the runtime with its own message. An
   * answer given at once is returned as it is, a promised one as a promise.
   */
  private guard(method: string, run: () => unknown, req?: unknown): unknown {
    let r: unknown;
    try {
      r = run();
    } catch (e) {
      this.logFailure(method, e, req);
      throw e;
    }
    if (!isThenable(r)) return r;
    return Promise.resolve(r).then(undefined, (e: unknown) => {
      this.logFailure(method, e, req);
      throw e;
    });
  }

  /** A handler's failure with where it was thrown: the runtime gets only the message. */
  private logFailure(method: string, e: unknown, req: unknown): void {
    this.log.error(`nri: plugin ${this.id}: ${method} failed: ${errorText(e)}${stackFrames(e)}`, requestFields(this.id, method, req));
  }

  private async configure(req: ConfigureRequest, ctx: HandlerContext, via: Revision): Promise<ConfigureResponse> {
    try {
      const res = await this.configureOrThrow(req, ctx, via);
      this.configured = true;
      return res;
    } catch (e) {
      const message = e instanceof RpcError ? e.rawMessage : (e as Error).message;
      this.configureError = new Error(`nri: plugin ${this.id}: configure failed: ${message}`, { cause: e });
      this.log.error(`${this.configureError.message}${stackFrames(e)}`);
      throw e;
    }
  }

  private async configureOrThrow(req: ConfigureRequest, ctx: HandlerContext, via: Revision): Promise<ConfigureResponse> {
    const runtime = runtimeOf(req, via, this.id, this.log);
    this.runtimeInfo = runtime;
    const custom = toMessage(v1beta1.ConfigureResponse, (await this.handlers.configure?.(req, ctx)) as never);
    const events = subscription(custom.events, runtime, { id: this.id, handled: this.events, unknownEvents: this.options.unknownEvents ?? "skip", log: this.log });
    this.subscribedMask = events;
    const failurePolicy = custom.failurePolicy ?? (this.options.failurePolicy === undefined ? undefined : toMessage(v1beta1.ConfigureResponse, { failurePolicy: this.options.failurePolicy }).failurePolicy);
    return toMessage(v1beta1.ConfigureResponse, failurePolicy === undefined ? { events } : { events, failurePolicy });
  }

  /** One Synchronize call; before the plugin is up, its failure is why the runtime drops it. */
  private async synchronizeOnce(req: SynchronizeRequest, ctx: HandlerContext): Promise<unknown> {
    try {
      return await this.guard("Synchronize", () => this.synchronize(req, ctx));
    } catch (e) {
      if (!this.isSynchronized) this.configureError ??= new Error(`nri: plugin ${this.id}: synchronize failed: ${(e as Error).message}`, { cause: e });
      throw e;
    }
  }

  /** Accumulates chunks sent with `more` and hands the handler everything once. */
  private async synchronize(req: SynchronizeRequest, ctx: HandlerContext): Promise<unknown> {
    this.syncPods.push(...req.pods);
    this.syncContainers.push(...req.containers);
    if (req.more) return { more: true };
    const whole = v1beta1.SynchronizeRequest.create({ pods: this.syncPods, containers: this.syncContainers, more: false });
    this.syncPods = [];
    this.syncContainers = [];
    const out = await this.handlers.synchronize?.(whole, ctx);
    if (this.configured) {
      this.isSynchronized = true;
      this.synchronized();
    }
    return out ?? {};
  }
}
