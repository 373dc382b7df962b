import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageShape } from "@bufbuild/protobuf";
import {
  type Container,
  ContainerSchema,
  type ContainerUpdate,
  type CreateContainerResponse,
  type PodSandbox,
  PodSandboxSchema,
  Plugin,
  type StopContainerResponse,
  type UpdateContainerResponse,
  type UpdatePodSandboxResponse,
} from "../../gen/v1beta1/api_pb.js";
import { eventBit, eventOfMethod } from "../api/events.js";
import { type HandlerContext, type PluginHandlers, type PluginMethods, checkHandlers } from "../api/handlers.js";
import type { Logger } from "../api/logger.js";
import { NriPlugin } from "../plugin/plugin.js";
import type { PluginOptions } from "../plugin/options.js";
import { type Loose, toMessage } from "../api/loose.js";
import type { EventMethod, EventOptions, PluginInfo } from "../runtime/index.js";
import { EventError } from "../runtime/errors.js";
import { NriRuntime } from "../runtime/nri-runtime.js";
import type { Deprecation } from "../runtime/deprecation.js";
import type { DefaultValidatorConfig } from "../runtime/default-validator.js";
import { RpcError } from "../ttrpc/errors.js";
import { errorText } from "../internal/error-text.js";
import { nriWireVersion } from "../internal/nri-wire-version.js";
import { sessionView } from "./session-view.js";
import { SocketRelay } from "./socket-relay.js";

/** A pod as a test writes it: the message, or a plain object whose 64-bit values may be numbers. */
export type TestPod = Loose<PodSandbox>;
/** A container as a test writes it. */
export type TestContainer = Loose<Container>;
/**
 * An event's request as a test writes it: the request NriRuntime's event method takes, or a plain
 * object of its fields whose 64-bit values may be numbers (`{ pod, container }`).
 */
export type TestRequest<K extends EventMethod> = Loose<MessageShape<PluginMethods[K]["input"]>>;

/** Options of a TestRuntime. */
export interface TestRuntimeOptions {
  /** Pods and containers new plugins are synchronized with. Default none. */
  pods?: TestPod[];
  containers?: TestContainer[];
  /** The Go runtime's defaults: 2000 ms per request, 5000 ms to register. */
  requestTimeoutMs?: number;
  registrationTimeoutMs?: number;
  /** ConfigureRequest.config for each plugin: one text for all, or per plugin. Default empty. */
  config?: string | ((plugin: { readonly name: string; readonly idx: string }) => string);
  /** The builtin default validator, as containerd configures it. */
  defaultValidator?: DefaultValidatorConfig;
  /** Where the runtime reports what the Go runtime logs; default, as NriRuntime's: warnings and errors to stderr. */
  log?: Partial<Logger>;
  /**
   * Records the session: each plugin connection is captured as `nri-wire record` captures it
   * (PREFIX.index.json, PREFIX.p2r.bin, PREFIX.r2p.bin; the n-th connection PREFIX-n.*), and
   * stop() writes the session view of them all to PREFIX.html (as `nri-wire view` does).
   */
  record?: string;
}

/** Options of TestRuntime.startPlugin: a plugin's options but where it connects. */
export type TestPluginOptions = Omit<PluginOptions, "socketPath" | "socket">;

/** An unsolicited UpdateContainers a plugin sent, as the test runtime received it. */
export interface ReceivedUpdate {
  readonly plugin: string;
  readonly update: readonly ContainerUpdate[];
}

/**
 * The handlers with each one's exception kept (the latest, per plugin) before it goes on the
 * wire, where only its message travels.
 */
function keepingExceptions(handlers: PluginHandlers, keep: (e: unknown) => void): PluginHandlers {
  const out: Record<string, (req: never, ctx: HandlerContext) => unknown> = {};
  for (const [name, h] of Object.entries(handlers) as [string, ((req: never, ctx: HandlerContext) => unknown) | undefined][]) {
    if (h === undefined) continue;
    out[name] = (req, ctx) => {
      let r: unknown;
      try {
        r = h(req, ctx);
      } catch (e) {
        keep(e);
        throw e;
      }
      if (!(r instanceof Promise)) return r;
      return r.catch((e: unknown) => {
        keep(e);
        throw e;
      });
    };
  }
  return out as PluginHandlers;
}

/**
 * An in-process NRI runtime for plugin tests: it listens on a private socket, and each event
 * method relays the event to the connected plugins and resolves with their answers merged exactly
 * as containerd/nri's Go runtime merges them (or rejects with the Go runtime's error text). The
 * event methods are NriRuntime's, with the same requests, written as plain objects if you like.
 *
 * It fails loudly rather than test nothing: an event first waits until every plugin connected
 * to its socket is registered and synchronized, and rejects when none is connected, when one
 * does not get there within the registration and request timeouts, or when no registered plugin
 * subscribes to the event. Requests take 64-bit values as numbers or bigints; answers hold them
 * as bigints, as the generated types do. When a handler of a plugin started by startPlugin
 * throws, the event's error ends its `cause` chain with that exception, stack and all.
 *
 * ```ts
 * const runtime = await TestRuntime.start();
 * await runtime.startPlugin(handlers, { name: "mine", idx: "10" });
 * const { adjust } = await runtime.createContainer({ pod: { id: "pod0" }, container: { id: "ctr0", podSandboxId: "pod0" } });
 * await runtime.stop();
 * ```
 */
export class TestRuntime {
  /** Settles once the runtime has stopped. */
  readonly closed: Promise<void>;
  private settleClosed!: () => void;
  private readonly started: NriPlugin[] = [];
  /** Per plugin started here (by id): the exception its handlers threw last. */
  private readonly thrown = new Map<string, unknown>();
  private stopping: Promise<void> | undefined;
  /** Aborted by stop(): what waits for plugins gives up. */
  private readonly stopSignal = new AbortController();
  private captureFiles: readonly string[] = [];

  private constructor(
    /** Every unsolicited update plugins sent, in order (all are reported as applied). */
    readonly updates: readonly ReceivedUpdate[],
    /** The runtime underneath: its events relay without the test runtime's checks. */
    readonly runtime: NriRuntime,
    private readonly relay: SocketRelay,
    private readonly dir: string,
    /** How long an event waits for connected plugins to be listed. */
    private readonly waitMs: number,
    private readonly record: string | undefined,
  ) {
    this.closed = new Promise((r) => (this.settleClosed = r));
  }

  /** Starts a runtime on a fresh socket in a temporary directory. */
  static async start(options: TestRuntimeOptions = {}): Promise<TestRuntime> {
    const dir = mkdtempSync(join(tmpdir(), "nri-test-"));
    const inner = join(dir, "runtime.sock");
    const updates: ReceivedUpdate[] = [];
    const log = options.log;
    const config = options.config;
    const runtime = new NriRuntime({
      name: "nri-wire-test-runtime",
      version: `v${nriWireVersion()}`,
      socketPath: inner,
      pluginPath: join(dir, "no-plugins"),
      pluginConfigPath: join(dir, "no-config"),
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.registrationTimeoutMs === undefined ? {} : { registrationTimeoutMs: options.registrationTimeoutMs }),
      ...(options.defaultValidator === undefined ? {} : { defaultValidator: options.defaultValidator }),
      ...(config === undefined ? {} : { externalPluginConfig: typeof config === "string" ? () => config : config }),
      synchronize: async (sync) =>
        void (await sync(
          (options.pods ?? []).map((p) => toMessage(PodSandboxSchema, p)),
          (options.containers ?? []).map((c) => toMessage(ContainerSchema, c)),
        )),
      updateContainers: (update, source) => {
        updates.push({ plugin: source.plugin, update });
        return [];
      },
      ...(log === undefined ? {} : { log }),
    });
    let relay: SocketRelay | undefined;
    try {
      await runtime.start();
      relay = await SocketRelay.listen(join(dir, "nri.sock"), inner, options.record);
    } catch (e) {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    // Registration, then Configure and Synchronize, each within its timeout.
    const waitMs = (options.registrationTimeoutMs ?? 5000) + 2 * (options.requestTimeoutMs ?? 2000);
    return new TestRuntime(updates, runtime, relay, dir, waitMs, options.record);
  }

  /** The socket a plugin connects to. */
  get socketPath(): string {
    return this.relay.path;
  }

  /** Registered plugins, in the order events reach them. */
  get plugins(): readonly PluginInfo[] {
    return this.runtime.plugins;
  }

  /** Deprecations recorded for old plugins (StateChange fallbacks). */
  get deprecations(): readonly Deprecation[] {
    return this.runtime.deprecations;
  }

  /** With the `record` option, the index files of the captures, once stop() has written them. */
  get captures(): readonly string[] {
    return this.captureFiles;
  }

  /**
   * Starts a plugin with `handlers` on this runtime's socket and resolves once the runtime lists
   * it (registered, configured and synchronized); rejects when it does not get there, and then
   * the plugin is closed.
   */
  async startPlugin(handlers: PluginHandlers, options: TestPluginOptions = {}): Promise<NriPlugin> {
    if (this.stopping !== undefined) throw new Error("test runtime: startPlugin: the runtime is stopped");
    checkHandlers(handlers);
    let id = "";
    const plugin = new NriPlugin(
      keepingExceptions(handlers, (e) => this.thrown.set(id, e)),
      { ...options, socketPath: this.socketPath },
    );
    id = plugin.id;
    this.started.push(plugin);
    await plugin.start();
    try {
      await this.settled("startPlugin");
    } catch (e) {
      plugin.close(e as Error);
      throw e;
    }
    return plugin;
  }

  /** Resolves once `n` plugins are registered, configured and synchronized. */
  waitForPlugins(n = 1, timeoutMs = this.waitMs): Promise<void> {
    return this.runtime.waitForPlugins(n + this.builtins(), timeoutMs);
  }

  private builtins(): number {
    return this.runtime.plugins.filter((p) => p.kind === "builtin" && !p.closed).length;
  }

  private listed(): PluginInfo[] {
    return this.runtime.plugins.filter((p) => p.kind !== "builtin" && !p.closed);
  }

  /** Waits until every plugin connected to the socket is listed; `what` names the caller in the error. */
  private async settled(what: string): Promise<void> {
    const deadline = performance.now() + this.waitMs;
    const stopped = new Promise<void>((r) => this.stopSignal.signal.addEventListener("abort", () => r(), { once: true }));
    for (;;) {
      if (this.stopSignal.signal.aborted) throw new Error(`test runtime: ${what}: the runtime is stopped`);
      const connected = this.relay.connections;
      if (this.listed().length >= connected) return;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`test runtime: ${what}: ${this.listed().length} of ${connected} connected plugins registered after ${this.waitMs} ms`);
      const listed = this.runtime.waitForPlugins(connected + this.builtins(), left).catch(() => undefined);
      await Promise.race([listed, this.relay.changed(), stopped]);
    }
  }

  /** Waits for the connected plugins, and checks that one of them takes `method`. */
  private async reach(method: string): Promise<void> {
    await this.settled(method);
    const listed = this.listed();
    if (listed.length === 0) throw new Error(`test runtime: ${method} reached no plugin: none is registered (start one with startPlugin, or connect one to socketPath)`);
    const bit = eventBit(eventOfMethod(method)!);
    if (!listed.some((p) => (p.events & bit) !== 0)) throw new Error(`test runtime: ${method} reached no plugin: none of ${listed.map((p) => p.id).join(", ")} subscribes to it`);
  }

  /** Relays one event once the plugins are there; a failure caused by a handler's exception ends its cause chain with it. */
  private async event<K extends EventMethod, R>(method: K, request: TestRequest<K>, send: (req: MessageShape<PluginMethods[K]["input"]>) => Promise<R>): Promise<R> {
    const desc = Plugin.method[method];
    await this.reach(desc.name);
    const req = toMessage(desc.input as never, request as never) as MessageShape<PluginMethods[K]["input"]>;
    this.thrown.clear();
    try {
      return await send(req);
    } catch (e) {
      throw this.withException(e);
    }
  }

  /**
   * The event's error with the handler's exception as the cause of the status the plugin
   * answered with (the end of the chain), when that status carries the exception's message.
   */
  private withException(e: unknown): unknown {
    if (!(e instanceof EventError)) return e;
    const thrown = this.thrown.get(e.plugin);
    if (thrown === undefined) return e;
    let last: unknown = e;
    while (last instanceof Error && last.cause !== undefined) last = last.cause;
    const said = thrown instanceof RpcError ? thrown.rawMessage : errorText(thrown);
    if (last instanceof RpcError && last !== thrown && last.rawMessage === said) Object.defineProperty(last, "cause", { value: thrown, writable: true, configurable: true });
    return e;
  }

  /** RunPodSandbox, relayed to every subscribed plugin in order. */
  runPodSandbox(request: TestRequest<"runPodSandbox">, o?: EventOptions): Promise<void> {
    return this.event("runPodSandbox", request, (req) => this.runtime.runPodSandbox(req, o));
  }

  /** UpdatePodSandbox with the pod's new resources and overhead; the response is always empty. */
  updatePodSandbox(request: TestRequest<"updatePodSandbox">, o?: EventOptions): Promise<UpdatePodSandboxResponse> {
    return this.event("updatePodSandbox", request, (req) => this.runtime.updatePodSandbox(req, o));
  }

  /** PostUpdatePodSandbox, relayed to every subscribed plugin in order. */
  postUpdatePodSandbox(request: TestRequest<"postUpdatePodSandbox">, o?: EventOptions): Promise<void> {
    return this.event("postUpdatePodSandbox", request, (req) => this.runtime.postUpdatePodSandbox(req, o));
  }

  /** StopPodSandbox, relayed to every subscribed plugin in order. */
  stopPodSandbox(request: TestRequest<"stopPodSandbox">, o?: EventOptions): Promise<void> {
    return this.event("stopPodSandbox", request, (req) => this.runtime.stopPodSandbox(req, o));
  }

  /** RemovePodSandbox, relayed to every subscribed plugin in order. */
  removePodSandbox(request: TestRequest<"removePodSandbox">, o?: EventOptions): Promise<void> {
    return this.event("removePodSandbox", request, (req) => this.runtime.removePodSandbox(req, o));
  }

  /** CreateContainer: the merged adjustment and updates of every plugin, as the Go runtime merges them. */
  createContainer(request: TestRequest<"createContainer">, o?: EventOptions): Promise<CreateContainerResponse> {
    return this.event("createContainer", request, (req) => this.runtime.createContainer(req, o));
  }

  /** PostCreateContainer, relayed to every subscribed plugin in order. */
  postCreateContainer(request: TestRequest<"postCreateContainer">, o?: EventOptions): Promise<void> {
    return this.event("postCreateContainer", request, (req) => this.runtime.postCreateContainer(req, o));
  }

  /** StartContainer, relayed to every subscribed plugin in order. */
  startContainer(request: TestRequest<"startContainer">, o?: EventOptions): Promise<void> {
    return this.event("startContainer", request, (req) => this.runtime.startContainer(req, o));
  }

  /** PostStartContainer, relayed to every subscribed plugin in order. */
  postStartContainer(request: TestRequest<"postStartContainer">, o?: EventOptions): Promise<void> {
    return this.event("postStartContainer", request, (req) => this.runtime.postStartContainer(req, o));
  }

  /** UpdateContainer: the merged updates, the target's own entry always last (an empty ContainerUpdate if no plugin updated it). */
  updateContainer(request: TestRequest<"updateContainer">, o?: EventOptions): Promise<UpdateContainerResponse> {
    return this.event("updateContainer", request, (req) => this.runtime.updateContainer(req, o));
  }

  /** PostUpdateContainer, relayed to every subscribed plugin in order. */
  postUpdateContainer(request: TestRequest<"postUpdateContainer">, o?: EventOptions): Promise<void> {
    return this.event("postUpdateContainer", request, (req) => this.runtime.postUpdateContainer(req, o));
  }

  /** StopContainer: the merged updates of any container, the stopped one included. */
  stopContainer(request: TestRequest<"stopContainer">, o?: EventOptions): Promise<StopContainerResponse> {
    return this.event("stopContainer", request, (req) => this.runtime.stopContainer(req, o));
  }

  /** RemoveContainer, relayed to every subscribed plugin in order. */
  removeContainer(request: TestRequest<"removeContainer">, o?: EventOptions): Promise<void> {
    return this.event("removeContainer", request, (req) => this.runtime.removeContainer(req, o));
  }

  /**
   * Stops the runtime (sending Shutdown with `reason`, if given), waits for the plugins
   * startPlugin started to close, writes the recording (option `record`) and removes the socket.
   * Settles whatever state the plugins are in; calling it again returns the same promise.
   */
  stop(reason?: string): Promise<void> {
    return (this.stopping ??= this.stopOnce(reason));
  }

  private async stopOnce(reason: string | undefined): Promise<void> {
    this.stopSignal.abort();
    try {
      await this.runtime.stop(reason);
    } finally {
      try {
        this.captureFiles = await this.relay.close();
        await Promise.all(this.started.map((p) => p.closed));
        if (this.record !== undefined) writeFileSync(`${this.record}.html`, sessionView(this.captureFiles));
      } finally {
        rmSync(this.dir, { recursive: true, force: true });
        this.settleClosed();
      }
    }
  }
}
