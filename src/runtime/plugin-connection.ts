import type { Duplex } from "node:stream";
import { create, fromBinary, messages, toBinary } from "./messages.js";
import { Runtime as AlphaRuntime } from "../../gen/v1alpha1/api_pb.js";
import { type ContainerEviction, type ContainerUpdate, Plugin, Runtime as BetaRuntime, type RegisterPluginRequest } from "../../gen/v1beta1/api_pb.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { TranslateError } from "../translate/errors.js";
import { type CallOptions, Client } from "../ttrpc/client.js";
import { ProtocolError, RpcError } from "../ttrpc/errors.js";
import { Server } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import { registerService } from "../ttrpc/typed.js";
import { type Revision, packages, responseToV1beta1, stateChangeEventOf, toV1alpha1 } from "../translate/index.js";
import { GO_CANCELED, GO_DEADLINE_EXCEEDED, GO_PROTO_DECODE, GO_TTRPC_CLOSED, PluginCallError } from "./call-error.js";
import type { BackendCallOptions, PluginBackend, PluginMethodName, PluginRequest, PluginResponse } from "./plugin-backend.js";
import { goQuote } from "./go-quote.js";
import { encodedRequest } from "./shared-payload.js";
import { pluginIndexError, pluginNameError } from "./plugin-name.js";

/** What a plugin said in RegisterPlugin, and which revision it said it in. */
export interface Registration {
  readonly name: string;
  readonly idx: string;
  readonly version: Revision;
}

/** How early a DEADLINE_EXCEEDED may come and still be the call's deadline (timer granularity). */
const DEADLINE_TOLERANCE_MS = 1;

/** The service calls are made to, before any translation for a v1alpha1 plugin. */
const BETA_PLUGIN = `${packages.v1beta1}.Plugin`;

/** What a connection needs from the runtime. */
export interface ConnectionHooks {
  /** An unsolicited UpdateContainers; resolves with the updates that failed. */
  updateContainers(conn: PluginConnection, update: ContainerUpdate[], evict: ContainerEviction[]): Promise<ContainerUpdate[]>;
  /** The plugin got `event` (a method name) through StateChange, successfully. */
  deprecated(conn: PluginConnection, event: string): void;
}

/**
 * The runtime's end of one plugin's socket: the mux, a ttrpc client on conn 1 for the Plugin
 * service and a ttrpc server on conn 2 for the Runtime service (both revisions). Calls are made
 * in v1beta1 terms and translated for v1alpha1 plugins; a StateChange-era plugin is switched to
 * StateChange for the nine old events on its first UNIMPLEMENTED, as the reference does.
 */
export class PluginConnection implements PluginBackend {
  readonly mux: Mux;
  readonly closed: Promise<void>;
  /** The registration, once the plugin has registered. */
  registration: Registration | undefined;
  /** Whether the nine old events go to this plugin as StateChange. */
  stateChange = false;
  private readonly client: Client;
  private readonly registered: Promise<Registration>;
  private settleRegistration!: { resolve: (r: Registration) => void; reject: (e: Error) => void };
  private readonly deprecatedEvents = new Set<string>();

  constructor(
    socket: Duplex,
    readonly kind: "external" | "pre-connected",
    private readonly hooks: ConnectionHooks,
    busyPollMicros = 0,
  ) {
    this.mux = new Mux(socket, { busyPollMicros });
    this.closed = this.mux.closed.then(() => undefined);
    this.registered = new Promise((resolve, reject) => (this.settleRegistration = { resolve, reject }));
    this.registered.catch(() => undefined);
    void this.mux.closed.then(() => this.settleRegistration.reject(new Error("failed to register plugin, connection closed")));
    this.client = new Client(this.mux.open(PLUGIN_SERVICE_CONN));
    const server = new Server();
    registerService(server, BetaRuntime, {
      registerPlugin: (req) => this.register(req, "v1beta1"),
      updateContainers: async (req) => ({ failed: await this.hooks.updateContainers(this, req.update, req.evict) }),
    }, { messages });
    // The callbacks always get v1beta1 messages: a v1alpha1 plugin's are the same bytes, retyped.
    const alpha = AlphaRuntime.method.updateContainers;
    const beta = BetaRuntime.method.updateContainers;
    registerService(server, AlphaRuntime, {
      registerPlugin: (req) => this.register(req, "v1alpha1"),
      updateContainers: async (req) => {
        const r = fromBinary(beta.input, toBinary(alpha.input, req));
        const failed = await this.hooks.updateContainers(this, r.update, r.evict);
        return fromBinary(alpha.output, toBinary(beta.output, create(beta.output, { failed })));
      },
    }, { messages });
    server.serve(this.mux.open(RUNTIME_SERVICE_CONN));
  }

  /**
   * Resolves with the plugin's registration, or rejects with the reference's text for an invalid
   * name or index (`failed to register plugin: plugin registered with an invalid name: ...`).
   */
  waitForRegistration(): Promise<Registration> {
    return this.registered;
  }

  private register(req: Pick<RegisterPluginRequest, "pluginName" | "pluginIdx">, version: Revision): object {
    if (this.registration !== undefined) return {};
    // Only an external plugin's claim is checked and used; a launched one is named by its file.
    if (this.kind === "external") {
      const nameErr = pluginNameError(req.pluginName);
      if (nameErr !== undefined) {
        this.refuse(`failed to register plugin: plugin registered with an invalid name: ${nameErr}`);
        throw new Error(`invalid plugin name: ${nameErr}`);
      }
      const idxErr = pluginIndexError(req.pluginIdx);
      if (idxErr !== undefined) {
        this.refuse(`failed to register plugin: plugin ${goQuote(req.pluginName)} registered with an invalid index: ${idxErr}`);
        throw new Error(`invalid plugin index: ${idxErr}`);
      }
    }
    this.registration = { name: req.pluginName, idx: req.pluginIdx, version };
    this.settleRegistration.resolve(this.registration);
    return {};
  }

  private refuse(why: string): void {
    this.settleRegistration.reject(new Error(why));
  }

  async call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    const desc = Plugin.method[method];
    const payload = encodedRequest(desc.input, request);
    let bytes: Uint8Array;
    const started = performance.now();
    try {
      bytes = await this.callRaw(desc.name, payload, options);
    } catch (e) {
      throw this.failure(e, options, performance.now() - started);
    }
    try {
      return fromBinary(desc.output, bytes) as PluginResponse<K>;
    } catch (e) {
      throw new PluginCallError(GO_PROTO_DECODE, "decode", { cause: e });
    }
  }

  private callRaw(method: string, payload: Uint8Array, options: BackendCallOptions): Promise<Uint8Array> {
    const o: CallOptions = options.signal === undefined ? { timeoutMs: options.timeoutMs } : { signal: options.signal, timeoutMs: options.timeoutMs };
    const version = this.registration?.version ?? "v1beta1";
    // Not through an async function: the client's own promise saves turns of the microtask queue.
    if (version === "v1beta1") return this.client.call(BETA_PLUGIN, method, payload, o);
    return this.callAlpha(method, payload, options, o);
  }

  private async callAlpha(method: string, payload: Uint8Array, options: BackendCallOptions, o: CallOptions): Promise<Uint8Array> {
    const isEvent = stateChangeEventOf(method) !== undefined;
    const viaStateChange = this.stateChange && isEvent;
    const out = toV1alpha1({ service: BETA_PLUGIN, method, payload }, viaStateChange ? "statechange" : "dedicated");
    let res: Uint8Array;
    try {
      res = await this.client.call(out.service, out.method, out.payload, o);
    } catch (e) {
      const fallBack = !viaStateChange && isEvent && e instanceof RpcError && e.code === Code.UNIMPLEMENTED;
      if (!fallBack) throw e;
      this.stateChange = true;
      return this.callRaw(method, payload, options);
    }
    if (viaStateChange && !this.deprecatedEvents.has(method)) {
      this.deprecatedEvents.add(method);
      this.hooks.deprecated(this, method);
    }
    try {
      return responseToV1beta1({ service: BETA_PLUGIN, method }, res).payload;
    } catch (e) {
      throw new PluginCallError(GO_PROTO_DECODE, "decode", { cause: e });
    }
  }

  /** A rejected call as the reference classifies it. */
  private failure(e: unknown, options: BackendCallOptions, elapsedMs: number): PluginCallError {
    if (e instanceof PluginCallError) return e;
    // The event's cancellation, as Go's canceled context: whatever the call ended with.
    if (options.signal?.aborted === true) return new PluginCallError(GO_CANCELED, "canceled", { cause: options.signal.reason });
    if (this.mux.closeReason !== undefined) return new PluginCallError(GO_TTRPC_CLOSED, "closed", { cause: e });
    if (e instanceof TranslateError) return new PluginCallError(GO_PROTO_DECODE, "decode", { cause: e });
    // DEADLINE_EXCEEDED once the call's time is up is the call's own deadline: the ttrpc client's
    // timer, or a server answering when timeout_nano passes at its end, either of which may beat
    // the runtime's timer by a hair. Earlier, it is an answer like any other (as for Go).
    // A budget within a few timer ticks (the last page of a long Synchronize) cannot be told
    // apart by time: its DEADLINE_EXCEEDED is its deadline.
    const timedOut = elapsedMs >= options.timeoutMs - DEADLINE_TOLERANCE_MS || options.timeoutMs <= 5 * DEADLINE_TOLERANCE_MS;
    if (e instanceof RpcError && e.code === Code.DEADLINE_EXCEEDED && timedOut) return new PluginCallError(GO_DEADLINE_EXCEEDED, "deadline", { cause: e });
    if (e instanceof RpcError) return PluginCallError.fromStatus(e);
    if (e instanceof ProtocolError) return new PluginCallError(`${e.message}: protocol error`, "protocol", { cause: e });
    return new PluginCallError(e instanceof Error ? e.message : String(e), "status", { cause: e });
  }

  close(reason: Error = new Error("nri: plugin connection closed by the runtime")): void {
    this.mux.close(reason);
  }
}
