import type { Duplex } from "node:stream";
import type { ContainerEviction, ContainerUpdate } from "../../gen/v1beta1/api_lite.js";
import { pluginService } from "../api/services.js";
import type { Mux } from "../mux/mux.js";
import { TranslateError } from "../translate/errors.js";
import type { CallOptions } from "../ttrpc/client.js";
import { ProtocolError, RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";
import type { Revision } from "../translate/index.js";
import { AnswerError, PluginCallError } from "./errors.js";
import { GO_CANCELED, GO_DEADLINE_EXCEEDED, GO_PROTO_DECODE, GO_TTRPC_CLOSED } from "./go/status-text.js";
import type { BackendCallOptions, PluginBackend } from "./plugin-backend.js";
import type { PluginMethodName, PluginRequest, PluginResponse } from "../api/handlers.js";
import { fromBinary } from "../api/messages.js";
import { RuntimeConnection } from "./runtime-connection.js";
import { errorText } from "../internal/error-text.js";

/** What a plugin said in RegisterPlugin, and which revision it said it in. */
export interface Registration {
  readonly name: string;
  readonly idx: string;
  readonly version: Revision;
}

/** How early a DEADLINE_EXCEEDED may come and still be the call's deadline (timer granularity). */
const DEADLINE_TOLERANCE_MS = 1;

/** What a connection needs from the runtime. */
export interface ConnectionHooks {
  /** An unsolicited UpdateContainers; resolves with the updates that failed. */
  updateContainers(conn: PluginConnection, update: ContainerUpdate[], evict: ContainerEviction[]): Promise<ContainerUpdate[]>;
  /** The plugin got `event` (a method name) through StateChange, successfully. */
  deprecated(conn: PluginConnection, event: string): void;
}

/**
 * A plugin's socket as NriRuntime calls it: the runtime-side connection core (registration,
 * revisions, the StateChange fallback, strict decoding) with every failure classified as the
 * reference classifies it (PluginCallError).
 */
export class PluginConnection implements PluginBackend {
  readonly mux: Mux;
  readonly closed: Promise<void>;
  private readonly core: RuntimeConnection;
  private named: Registration | undefined;

  constructor(
    socket: Duplex,
    readonly kind: "external" | "pre-connected",
    hooks: ConnectionHooks,
    busyPollMicros = 0,
  ) {
    // Only an external plugin's claim is checked and used; a launched one is named by its file.
    this.core = new RuntimeConnection(socket, {
      checkIdentity: kind === "external",
      busyPollMicros,
      updateContainers: (req) => hooks.updateContainers(this, req.update, req.evict),
      deprecated: (method) => hooks.deprecated(this, method),
    });
    this.mux = this.core.mux;
    this.closed = this.mux.closed.then(() => undefined);
  }

  /** The registration, once the plugin has registered. */
  get registration(): Registration | undefined {
    const r = this.core.registration;
    return r === undefined ? undefined : (this.named ??= { name: r.name, idx: r.idx, version: r.revision });
  }

  /** Whether the nine old events go to this plugin as StateChange. */
  get stateChange(): boolean {
    return this.core.stateChange;
  }

  /**
   * Resolves with the plugin's registration, or rejects with the reference's text for an invalid
   * name or index (`failed to register plugin: plugin registered with an invalid name: ...`).
   */
  waitForRegistration(): Promise<Registration> {
    return this.core.registered.then(() => this.registration!);
  }

  async call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    const desc = pluginService[method];
    const payload = options.shared?.bytes() ?? desc.input.encode(request);
    const o: CallOptions = options.signal === undefined ? { timeoutMs: options.timeoutMs } : { signal: options.signal, timeoutMs: options.timeoutMs };
    let bytes: Uint8Array;
    const started = performance.now();
    try {
      bytes = await this.core.call(desc.name, payload, o);
    } catch (e) {
      throw this.failure(e, options, performance.now() - started);
    }
    try {
      return fromBinary(desc.output, bytes) as PluginResponse<K>;
    } catch (e) {
      throw new PluginCallError(GO_PROTO_DECODE, "decode", { cause: e });
    }
  }

  /** A rejected call as the reference classifies it. */
  private failure(e: unknown, options: BackendCallOptions, elapsedMs: number): PluginCallError {
    if (e instanceof PluginCallError) return e;
    if (e instanceof AnswerError) return new PluginCallError(GO_PROTO_DECODE, "decode", { cause: e.cause });
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
    return new PluginCallError(errorText(e), "status", { cause: e });
  }

  close(reason: Error = new Error("nri: plugin connection closed by the runtime")): void {
    this.core.close(reason);
  }
}
