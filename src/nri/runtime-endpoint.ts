import type { Server as NetServer, Socket } from "node:net";
import { type MessageInitShape, type MessageShape, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type Container,
  type ContainerUpdate,
  Plugin,
  type PodSandbox,
  RegisterPluginRequestSchema,
  type UpdateContainersRequest,
  UpdateContainersRequestSchema,
  UpdateContainersResponseSchema,
} from "../../gen/v1beta1/api_pb.js";
import { VALID_EVENTS_MASK, checkMask, eventBit } from "../events.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { type CallOptions, Client } from "../ttrpc/client.js";
import { RpcError } from "../ttrpc/errors.js";
import { Server } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import { type ServiceClient, type Transport, createClient } from "../ttrpc/typed.js";
import { type Deprecation, stateChangeDeprecation } from "./deprecation.js";
import { decodeMessage } from "./codec.js";
import { callError } from "./errors.js";
import { type PluginIdentity, checkPluginIndex, checkPluginName, pluginId } from "./identity.js";
import { listenUnix } from "./socket.js";
import { alphaResponseToBeta, betaRequestToAlpha, eventOfMethod, isStateChangeMethod } from "./translation.js";
import { type ApiVersion, NRI_VERSION, V1ALPHA1, V1BETA1 } from "./versions.js";

type PluginMethods = (typeof Plugin)["method"];

/** The plugin methods a runtime sends for pod and container events. */
export type EventMethod = Exclude<keyof PluginMethods, "configure" | "synchronize" | "shutdown">;

/** Events whose delivery goes on past a failing plugin. */
const TEARDOWN: ReadonlySet<string> = new Set(["stopPodSandbox", "removePodSandbox", "stopContainer", "removeContainer"]);

/** Options of a runtime endpoint. */
export interface RuntimeOptions {
  /** Socket to listen on; created with mode 0600, a stale socket file is replaced. */
  socketPath: string;
  /** Runtime name and version sent in ConfigureRequest. */
  name: string;
  version: string;
  /** Per-call timeout for plugins; a plugin that times out is closed. Default 2000 ms. */
  requestTimeoutMs?: number;
  /** How long a new connection may take to register. Default 5000 ms. */
  registrationTimeoutMs?: number;
  /** Configuration text for a plugin (ConfigureRequest.config). */
  config?: (plugin: PluginIdentity) => string;
  /** The pods and containers a new plugin is synchronized with. */
  synchronize?: () => { pods: PodSandbox[]; containers: Container[] } | Promise<{ pods: PodSandbox[]; containers: Container[] }>;
  /** Unsolicited UpdateContainers from a plugin; returns the updates that failed. */
  onUpdateContainers?: (plugin: PluginHandle, request: UpdateContainersRequest) => ContainerUpdate[] | Promise<ContainerUpdate[]>;
  /** Each deprecation as it is recorded. */
  onDeprecation?: (d: Deprecation) => void;
  /** A plugin finished registration, configuration and synchronization. */
  onPluginReady?: (plugin: PluginHandle) => void;
  /** A plugin's connection ended. */
  onPluginClosed?: (plugin: PluginHandle | undefined, reason: Error) => void;
}

/** The outcome of one event at one plugin. */
export interface EventResult<K extends EventMethod> {
  readonly plugin: PluginHandle;
  readonly response?: MessageShape<PluginMethods[K]["output"]>;
  readonly error?: Error;
}

/**
 * One registered plugin as the runtime sees it. `client` is a v1beta1 Plugin client whatever
 * the plugin speaks: calls are translated for v1alpha1 plugins, and a StateChange-era plugin
 * is switched to StateChange on its first UNIMPLEMENTED answer (once, no probing afterwards).
 */
export class PluginHandle implements Transport {
  readonly client: ServiceClient<PluginMethods>;
  /** Subscription mask from Configure (0 from the plugin means every event). */
  events = 0;
  /** Whether this v1alpha1 plugin gets the nine old events as StateChange. */
  stateChange = false;
  private readonly deprecated = new Set<string>();

  constructor(
    private readonly runtime: NriRuntime,
    readonly identity: PluginIdentity,
    /** The revision the plugin registered with. */
    readonly version: ApiVersion,
    private readonly raw: Client,
    readonly mux: Mux,
  ) {
    this.client = createClient(Plugin, this);
  }

  /** `NN-name`. */
  get id(): string {
    return pluginId(this.identity);
  }

  /** Whether the plugin subscribed to the event of `method` (a v1beta1 method name). */
  subscribes(method: string): boolean {
    const e = eventOfMethod(method);
    return e === undefined || (this.events & eventBit(e)) !== 0;
  }

  /** Transport: v1beta1 calls in, translated to what the plugin speaks. */
  async call(service: string, method: string, payload: Uint8Array, options?: CallOptions): Promise<Uint8Array> {
    if (this.version === "v1beta1") return this.raw.call(service, method, payload, options);
    const viaStateChange = this.stateChange && isStateChangeMethod(method);
    const out = betaRequestToAlpha(method, payload, viaStateChange);
    try {
      const res = await this.raw.call(`${V1ALPHA1}.Plugin`, out.method, out.payload, options);
      if (viaStateChange) this.deprecate(method);
      return alphaResponseToBeta(method, res);
    } catch (e) {
      // A StateChange-era plugin: switch it over on its first UNIMPLEMENTED, as the reference does.
      const fallBack = !this.stateChange && isStateChangeMethod(method) && e instanceof RpcError && e.code === Code.UNIMPLEMENTED;
      if (!fallBack) throw e;
      this.stateChange = true;
      return this.call(service, method, payload, options);
    }
  }

  private deprecate(method: string): void {
    if (this.deprecated.has(method)) return;
    this.deprecated.add(method);
    this.runtime.recordDeprecation(stateChangeDeprecation(this.id, method));
  }

  /** Closes the plugin's connection. */
  close(reason: Error): void {
    this.mux.close(reason);
  }
}

/**
 * A runtime's side of NRI: listens for plugins, registers them whatever revision they speak,
 * configures and synchronizes them, and delivers events to them in index order.
 */
export class NriRuntime {
  private server: NetServer | undefined;
  private readonly ready: PluginHandle[] = [];
  private readonly deprecationList: Deprecation[] = [];
  private readonly options: Required<Pick<RuntimeOptions, "requestTimeoutMs" | "registrationTimeoutMs">> & RuntimeOptions;
  private readonly waiters: (() => void)[] = [];
  private readonly pending = new Set<Mux>();

  constructor(options: RuntimeOptions) {
    for (const k of ["requestTimeoutMs", "registrationTimeoutMs"] as const) {
      const v = options[k];
      if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new RangeError(`nri: ${k} ${v} is not a positive number`);
    }
    this.options = { requestTimeoutMs: 2000, registrationTimeoutMs: 5000, ...options };
  }

  /** Ready plugins, ordered by index then name. */
  get plugins(): readonly PluginHandle[] {
    return this.ready;
  }

  /** Every deprecation recorded so far, in order. */
  get deprecations(): readonly Deprecation[] {
    return this.deprecationList;
  }

  /** @internal */
  recordDeprecation(d: Deprecation): void {
    this.deprecationList.push(d);
    this.options.onDeprecation?.(d);
  }

  /** Starts listening. */
  async start(): Promise<void> {
    this.server = await listenUnix(this.options.socketPath, (s) => void this.accept(s));
  }

  /** Resolves once at least `n` plugins are ready; rejects after `timeoutMs`. */
  waitForPlugins(n: number, timeoutMs = 30_000): Promise<void> {
    if (this.ready.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nri: ${this.ready.length} of ${n} plugins ready after ${timeoutMs} ms`)), timeoutMs);
      const check = (): void => {
        if (this.ready.length >= n) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  /** Stops listening and closes every plugin connection. */
  close(): void {
    this.server?.close();
    const reason = new Error("nri: runtime closed");
    for (const p of [...this.ready]) p.close(reason);
    for (const m of [...this.pending]) m.close(reason);
  }

  /**
   * Delivers an event to every subscribed plugin in index order and returns each plugin's
   * outcome. A failure stops delivery and throws, except for teardown events (stop and remove of
   * pods and containers), which go on to the next plugin and report the failure in the results.
   */
  async dispatch<K extends EventMethod>(method: K, request: MessageInitShape<PluginMethods[K]["input"]>): Promise<EventResult<K>[]> {
    const desc = Plugin.method[method];
    const payload = toBinary(desc.input, create(desc.input, request as never));
    const results: EventResult<K>[] = [];
    for (const plugin of [...this.ready]) {
      if (!plugin.subscribes(desc.name)) continue;
      try {
        const res = await plugin.call(`${V1BETA1}.Plugin`, desc.name, payload, { timeoutMs: this.options.requestTimeoutMs });
        results.push({ plugin, response: fromBinary(desc.output, res) as MessageShape<PluginMethods[K]["output"]> });
      } catch (e) {
        const err = callError(`nri: plugin ${plugin.id}: ${desc.name}`, e);
        if (e instanceof RpcError && e.code === Code.DEADLINE_EXCEEDED) plugin.close(err);
        if (!TEARDOWN.has(method)) throw err;
        results.push({ plugin, error: err });
      }
    }
    return results;
  }

  /** Sends Shutdown (with a reason where the plugin can receive one) to every plugin. */
  async shutdown(reason: string): Promise<void> {
    await Promise.allSettled(this.ready.map((p) => p.client.shutdown({ reason }, { timeoutMs: this.options.requestTimeoutMs })));
  }

  private async accept(socket: Socket): Promise<void> {
    const mux = new Mux(socket);
    this.pending.add(mux);
    let handle: PluginHandle | undefined;
    let registered!: (r: { identity: PluginIdentity; version: ApiVersion }) => void;
    const registration = new Promise<{ identity: PluginIdentity; version: ApiVersion }>((r) => (registered = r));
    const runtimeService = (version: ApiVersion) => ({
      RegisterPlugin: {
        kind: "unary" as const,
        handler: (payload: Uint8Array) => {
          const req = decodeMessage(RegisterPluginRequestSchema, payload);
          try {
            checkPluginName(req.pluginName);
            checkPluginIndex(req.pluginIdx);
          } catch (e) {
            throw new RpcError(Code.INVALID_ARGUMENT, (e as Error).message);
          }
          registered({ identity: { name: req.pluginName, idx: req.pluginIdx }, version });
          return new Uint8Array(0);
        },
      },
      UpdateContainers: {
        kind: "unary" as const,
        handler: async (payload: Uint8Array) => {
          if (handle === undefined) throw new RpcError(Code.FAILED_PRECONDITION, "plugin is not registered");
          const req = decodeMessage(UpdateContainersRequestSchema, payload);
          const failed = (await this.options.onUpdateContainers?.(handle, req)) ?? [];
          return toBinary(UpdateContainersResponseSchema, create(UpdateContainersResponseSchema, { failed }));
        },
      },
    });
    new Server().register(`${V1BETA1}.Runtime`, runtimeService("v1beta1")).register(`${V1ALPHA1}.Runtime`, runtimeService("v1alpha1")).serve(mux.open(RUNTIME_SERVICE_CONN));
    const raw = new Client(mux.open(PLUGIN_SERVICE_CONN));
    void mux.closed.then((reason) => {
      this.pending.delete(mux);
      const i = handle === undefined ? -1 : this.ready.indexOf(handle);
      if (i >= 0) this.ready.splice(i, 1);
      this.options.onPluginClosed?.(handle, reason);
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeoutMs = this.options.registrationTimeoutMs;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`nri: plugin did not register within ${timeoutMs} ms`)), timeoutMs);
      });
      const { identity, version } = await Promise.race([registration, timedOut, mux.closed.then((r) => Promise.reject(r))]);
      clearTimeout(timer);
      handle = new PluginHandle(this, identity, version, raw, mux);
      const call = { timeoutMs: this.options.requestTimeoutMs };
      const conf = await handle.client.configure(
        {
          config: this.options.config?.(identity) ?? "",
          runtimeName: this.options.name,
          runtimeVersion: this.options.version,
          registrationTimeout: BigInt(this.options.registrationTimeoutMs),
          requestTimeout: BigInt(this.options.requestTimeoutMs),
          NRIVersion: NRI_VERSION,
        },
        call,
      );
      checkMask(conf.events);
      handle.events = conf.events === 0 ? VALID_EVENTS_MASK : conf.events;
      const state = (await this.options.synchronize?.()) ?? { pods: [], containers: [] };
      await this.synchronize(handle, state.pods, state.containers);
      this.ready.push(handle);
      this.ready.sort((a, b) => (a.identity.idx === b.identity.idx ? a.identity.name.localeCompare(b.identity.name) : a.identity.idx < b.identity.idx ? -1 : 1));
      this.pending.delete(mux);
      this.options.onPluginReady?.(handle);
      for (const w of this.waiters.splice(0)) w();
    } catch (e) {
      clearTimeout(timer);
      const who = handle === undefined ? "plugin" : `plugin ${handle.id}`;
      mux.close(new Error(`nri: ${who}: setup failed: ${(e as Error).message}`, { cause: e }));
    }
  }

  /**
   * Synchronizes a plugin; when it answers RESOURCE_EXHAUSTED (the state does not fit one
   * message) the state is sent in pages marked `more`, halving the page until it fits.
   */
  private async synchronize(plugin: PluginHandle, pods: PodSandbox[], containers: Container[]): Promise<void> {
    const call = { timeoutMs: this.options.requestTimeoutMs };
    const items = pods.length + containers.length;
    for (let pages = 1; ; pages *= 2) {
      const size = Math.ceil(items / pages);
      let sent = false;
      try {
        for (let start = 0; start < Math.max(items, 1); start += Math.max(size, 1)) {
          const end = start + Math.max(size, 1);
          const more = end < items;
          const res = await plugin.client.synchronize(
            { pods: pods.slice(Math.min(start, pods.length), Math.min(end, pods.length)), containers: containers.slice(Math.max(0, start - pods.length), Math.max(0, end - pods.length)), more },
            call,
          );
          if (more && !res.more) throw new Error("plugin does not handle paged Synchronize");
          sent = true;
        }
        return;
      } catch (e) {
        const tooBig = e instanceof RpcError && e.code === Code.RESOURCE_EXHAUSTED;
        // Halve the page while nothing has been sent; a page failing after others would duplicate state.
        if (!tooBig || sent || size <= 1) throw e;
      }
    }
  }
}


