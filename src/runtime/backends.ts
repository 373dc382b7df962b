import type { Duplex } from "node:stream";
import type { ContainerEviction, ContainerUpdate } from "../../gen/v1beta1/api_lite.js";
import { type HandlerContext, type PluginHandlers, type PluginMethodName, type PluginRequest, type PluginResponse, eventsOf } from "../api/handlers.js";
import { create, fromBinary } from "../api/messages.js";
import { toMessage } from "../api/loose.js";
import { pluginService } from "../api/services.js";
import { errorText } from "../internal/error-text.js";
import type { Mux } from "../mux/mux.js";
import { TranslateError } from "../translate/errors.js";
import type { CallOptions } from "../ttrpc/client.js";
import type { KeyValue } from "../ttrpc/envelope.js";
import { ProtocolError, RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";
import { AnswerError, PluginCallError } from "./errors.js";
import { GO_CANCELED, GO_DEADLINE_EXCEEDED, GO_PROTO_DECODE, GO_TTRPC_CLOSED } from "./go/status-text.js";
import { type Registration, RuntimeConnection } from "./runtime-connection.js";
import type { SharedRequest } from "./shared-payload.js";

/* The two kinds of PluginBackend: a plugin on a socket (connected or launched) and a builtin plugin's handlers. */

/** How a plugin came to the runtime, as the reference names it in its logs. */
export type PluginKind = "external" | "pre-connected" | "builtin";

/** Options of one call to a plugin. */
export interface BackendCallOptions {
  /**
   * The call's time: the backend enforces it (a `deadline` PluginCallError when it passes) and a
   * socket plugin is sent it as ttrpc timeout_nano.
   */
  readonly timeoutMs: number;
  /** The event's cancellation: aborting it ends the call with a `canceled` PluginCallError. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The request's bytes as the event encoded them once for all its plugins: a socket plugin is
   * sent these instead of an encoding of its own; in-process handlers take the request.
   */
  readonly shared?: SharedRequest | undefined;
  /** ttrpc metadata sent with the call to a plugin on a socket. */
  readonly metadata?: readonly KeyValue[] | undefined;
}

/**
 * What the runtime calls a plugin through, whatever kind it is: a ttrpc connection (external
 * or launched) or in-process handlers. `call` rejects only with PluginCallError.
 */
export interface PluginBackend {
  readonly kind: PluginKind;
  call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>>;
  /** Ends the plugin's connection (nothing for in-process plugins). */
  close(): void;
  /** Settles when the plugin's connection has ended; never for in-process plugins. */
  readonly closed: Promise<void>;
}

/** How early a DEADLINE_EXCEEDED may come and still be the call's deadline (timer granularity). */
const DEADLINE_TOLERANCE_MS = 1;

/** What a connection needs from the runtime. */
export interface ConnectionHooks {
  /** An unsolicited UpdateContainers; resolves with the updates that failed. */
  updateContainers(conn: SocketBackend, update: ContainerUpdate[], evict: ContainerEviction[]): Promise<ContainerUpdate[]>;
  /** The plugin got `event` (a method name) through StateChange, successfully. */
  deprecated(conn: SocketBackend, event: string): void;
}

/**
 * A plugin's socket as NriRuntime calls it: the runtime-side connection core (registration,
 * revisions, the StateChange fallback, strict decoding) with every failure classified as the
 * reference classifies it (PluginCallError).
 */
export class SocketBackend implements PluginBackend {
  readonly mux: Mux;
  readonly closed: Promise<void>;
  private readonly core: RuntimeConnection;

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
    return this.core.registration;
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
    return this.core.registered;
  }

  async call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    const desc = pluginService[method];
    const payload = options.shared?.bytes() ?? desc.input.encode(request);
    const o: CallOptions = options.signal === undefined ? { timeoutMs: options.timeoutMs } : { signal: options.signal, timeoutMs: options.timeoutMs };
    if (options.metadata !== undefined && options.metadata.length > 0) o.metadata = options.metadata;
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

/**
 * The signal of one call to a plugin, like Go's `context.WithTimeout(ctx, requestTimeout)`: it
 * aborts with a `deadline` PluginCallError after `timeoutMs`, or with a `canceled` one when the
 * runtime's own signal for the event aborts first.
 */
class CallDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly outer: AbortSignal | undefined;
  /** performance.now() value at which the call's timeout passes. */
  readonly at: number;

  constructor(timeoutMs: number, outer?: AbortSignal) {
    this.at = performance.now() + timeoutMs;
    this.timer = setTimeout(() => this.controller.abort(new PluginCallError(GO_DEADLINE_EXCEEDED, "deadline")), timeoutMs);
    this.outer = outer;
    if (outer?.aborted) this.onOuterAbort();
    else outer?.addEventListener("abort", this.onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The failure this call ended with, once the signal has aborted. */
  get reason(): PluginCallError | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as PluginCallError) : undefined;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener("abort", this.onOuterAbort);
  }

  private readonly onOuterAbort = (): void => {
    clearTimeout(this.timer);
    this.controller.abort(new PluginCallError(GO_CANCELED, "canceled", { cause: this.outer?.reason }));
  };
}

/** An in-process plugin: index, name and handlers, the same handlers a plugin process takes. */
export interface BuiltinPlugin {
  readonly idx: string;
  readonly name: string;
  readonly handlers: PluginHandlers;
}

/**
 * Calls an in-process plugin. As in the reference, its handlers are not raced against the
 * request timeout: they get the signal and decide. A handler that rejects with the signal's
 * reason failed fatally (like a Go handler returning ctx.Err()); any other error is its answer.
 */
export class BuiltinBackend implements PluginBackend {
  readonly kind = "builtin" as const;
  readonly closed: Promise<void> = new Promise(() => undefined);

  constructor(readonly plugin: BuiltinPlugin) {}

  async call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    const desc = pluginService[method];
    const h = (this.plugin.handlers as Record<string, ((req: unknown, ctx: HandlerContext) => unknown) | undefined>)[method];
    let out: unknown;
    const deadline = new CallDeadline(options.timeoutMs, options.signal);
    try {
      out = h === undefined ? undefined : await h(request, { signal: deadline.signal, deadline: deadline.at });
    } catch (e) {
      if (deadline.signal.aborted && e === deadline.signal.reason) throw e as PluginCallError;
      if (method === "validateContainerAdjustment") {
        return create(pluginService.validateContainerAdjustment.output, { reject: true, reason: errorText(e) }) as PluginResponse<K>;
      }
      throw new PluginCallError(errorText(e), "status", { cause: e });
    } finally {
      deadline.dispose();
    }
    if (method === "configure") {
      const res = toMessage(pluginService.configure.output, out as never);
      if (res.events === 0) res.events = eventsOf(this.plugin.handlers);
      return res as PluginResponse<K>;
    }
    return toMessage(desc.output, out as never) as PluginResponse<K>;
  }

  close(): void {}
}
