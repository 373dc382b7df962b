import type { Server as NetServer, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { oversizeMessage } from "./client.js";
import { type ConnectionOptions, FrameConnection, resolveConnectionOptions } from "./connection.js";
import { type KeyValue, type RequestEnvelope, ResponseSizes, decodeRequest, writeResponseHead } from "./envelope.js";
import { ClosedError, RpcError, type StatusFields } from "./errors.js";
import { Flag, type Frame, MessageType } from "./frame.js";
import { type ListenUnixOptions, listenUnix } from "../internal/listen.js";
import { MessageQueue } from "./queue.js";
import { toggleHold } from "../internal/read-hold.js";
import { Code } from "./status.js";
import { type Deadline, processDeadlines } from "./deadlines.js";
import { StreamTable } from "./stream-table.js";
import { withTimeout } from "./with-timeout.js";
import { type Interceptor, chainInterceptors, checkInterceptors } from "../internal/interceptor.js";
import type { ServerCall, ServerInterceptor } from "./interceptors.js";

/** What a handler learns about its call. */
export interface CallContext {
  readonly service: string;
  readonly method: string;
  /** Request metadata entries in arrival order (a key may repeat). */
  readonly metadata: readonly KeyValue[];
  /** The caller's timeout in nanoseconds as sent (0: none). */
  readonly timeoutNano: number;
  /** performance.now() value at which the deadline passes, or undefined for none. */
  readonly deadline: number | undefined;
  /** Aborted when the deadline passes, the call is rejected, or the connection closes. */
  readonly signal: AbortSignal;
}

/** A unary method: one request, one response. */
export type UnaryHandler = (request: Uint8Array, ctx: CallContext) => Uint8Array | Promise<Uint8Array>;
/** A server-streaming method: one request, any number of responses. */
export type ServerStreamingHandler = (request: Uint8Array, ctx: CallContext) => AsyncIterable<Uint8Array>;
/** A client-streaming method: any number of requests, one response once the client closes its side. */
export type ClientStreamingHandler = (requests: AsyncIterable<Uint8Array>, ctx: CallContext) => Promise<Uint8Array>;
/** A bidirectional-streaming method: requests and responses in both directions at once. */
export type BidiStreamingHandler = (requests: AsyncIterable<Uint8Array>, ctx: CallContext) => AsyncIterable<Uint8Array>;

/** A raw method: its shape and handler. */
export type RawMethod =
  | { readonly kind: "unary"; readonly handler: UnaryHandler }
  | { readonly kind: "server_streaming"; readonly handler: ServerStreamingHandler }
  | { readonly kind: "client_streaming"; readonly handler: ClientStreamingHandler }
  | { readonly kind: "bidi_streaming"; readonly handler: BidiStreamingHandler };

/** Options of a Server. */
export interface ServerOptions extends ConnectionOptions {
  /**
   * Wrap every call's handler, the first outermost (see ServerInterceptor); none by default, and
   * then a handler that answers at once is answered at once.
   */
  interceptors?: readonly ServerInterceptor[];
}

const EMPTY: Uint8Array = new Uint8Array(0);

/**
 * A ttrpc server: services registered by name with raw or typed handlers, served on any number
 * of connections (sockets it accepts itself or Duplexes handed to serve()).
 */
export class Server {
  private readonly services = new Map<string, Map<string, RawMethod>>();
  private readonly connections = new Set<ServerConnection>();
  private readonly listeners = new Set<NetServer>();
  private readonly options: ServerOptions;
  private shuttingDown = false;
  /** @internal The interceptors, or undefined when there are none. */
  readonly interceptors: readonly ServerInterceptor[] | undefined;

  constructor(options: ServerOptions = {}) {
    resolveConnectionOptions(options);
    this.interceptors = checkInterceptors("ttrpc: interceptors", options.interceptors);
    this.options = options;
  }

  /** Registers a service's methods by name; a service can be registered once. */
  register(service: string, methods: Readonly<Record<string, RawMethod>>): this {
    if (this.services.has(service)) throw new Error(`ttrpc: service ${service} is already registered`);
    this.services.set(service, new Map(Object.entries(methods)));
    return this;
  }

  /** @internal */
  lookup(service: string, method: string): RawMethod | RpcError {
    const s = this.services.get(service);
    if (s === undefined) return new RpcError(Code.UNIMPLEMENTED, `service ${service}`);
    return s.get(method) ?? new RpcError(Code.UNIMPLEMENTED, `method ${method}`);
  }

  /** @internal */
  get draining(): boolean {
    return this.shuttingDown;
  }

  /** Serves one connection. */
  serve(socket: Duplex): ServerConnection {
    const conn = new ServerConnection(this, socket, this.options);
    this.connections.add(conn);
    void conn.closed.then(() => this.connections.delete(conn));
    if (this.shuttingDown) conn.closeWhenIdle();
    return conn;
  }

  /**
   * Listens on a unix socket path with listenUnix (mode 0600 unless told otherwise, never wider
   * for a moment; a stale socket file is replaced); resolves once listening.
   */
  async listen(path: string, options?: ListenUnixOptions): Promise<NetServer> {
    const srv = await listenUnix(path, (socket: Socket) => this.serve(socket), options);
    this.listeners.add(srv);
    return srv;
  }

  /**
   * Graceful close: stops accepting connections and calls, lets calls in flight finish, and
   * after `timeoutMs` closes whatever is left abruptly.
   */
  async shutdown(timeoutMs = 10_000): Promise<void> {
    this.shuttingDown = true;
    for (const l of this.listeners) l.close();
    this.listeners.clear();
    const all = [...this.connections];
    for (const c of all) c.closeWhenIdle();
    const deadline = new ClosedError(`ttrpc: server shutdown deadline of ${timeoutMs} ms passed`);
    // Whatever is still open once the deadline passes is closed abruptly; the rest is already.
    await withTimeout(Promise.all(all.map((c) => c.closed)), timeoutMs, () => deadline).catch(() => undefined);
    this.close(deadline);
  }

  /** Abrupt close: every connection ends now and every handler's signal is aborted. */
  close(reason: Error = new ClosedError("ttrpc: server closed")): void {
    this.shuttingDown = true;
    for (const l of this.listeners) l.close();
    this.listeners.clear();
    for (const c of [...this.connections]) c.close(reason);
  }
}

/** One connection served by a Server. */
export class ServerConnection extends FrameConnection {
  private readonly calls = new StreamTable<IncomingCall>();
  private lastStreamId = 0;
  private idleClose = false;
  /** Settles once the connection, gone idle, has half-closed (or has ended): see closeWhenIdle. */
  private idleEnd: Promise<void> | undefined;
  private idleEnded: () => void = () => undefined;
  private endingWrites = false;
  private readonly sizes = new ResponseSizes();

  constructor(
    private readonly server: Server,
    socket: Duplex,
    options: ConnectionOptions,
  ) {
    super(socket, options);
  }

  /** Calls in flight on this connection. */
  get active(): number {
    return this.calls.size;
  }

  /**
   * Closes as soon as no call is in flight; new calls are refused meanwhile. Settles once the
   * answers are written and the socket half-closed (or the connection has ended).
   */
  closeWhenIdle(): Promise<void> {
    if (this.idleEnd === undefined) {
      this.idleEnd = new Promise((resolve) => (this.idleEnded = resolve));
      void this.closed.then(() => this.idleEnded());
    }
    this.idleClose = true;
    if (this.calls.size === 0) this.finishIdle();
    return this.idleEnd;
  }

  /** Flushes and half-closes, once; the socket's close then ends the connection. */
  private finishIdle(): void {
    if (this.endingWrites) return;
    this.endingWrites = true;
    void this.endWrites().then(() => this.idleEnded());
  }

  protected onFrame(frame: Frame): void {
    const id = frame.streamId;
    // The reference's order: size first, then stream id parity, then the frame type.
    if (frame.oversize !== 0) {
      const msg = oversizeMessage(frame.oversize, this.options.maxDataLength);
      const call = this.calls.get(id);
      if (call !== undefined && frame.type === MessageType.Data) return call.reject(new RpcError(Code.RESOURCE_EXHAUSTED, msg));
      return this.sendStatus(id, Code.RESOURCE_EXHAUSTED, msg);
    }
    if (id % 2 !== 1) {
      return this.sendStatus(id, Code.INVALID_ARGUMENT, "StreamID must be odd for client initiated streams");
    }
    if (frame.type !== MessageType.Request && frame.type !== MessageType.Data) return; // ignored, as the reference does
    if (frame.type === MessageType.Data) {
      const call = this.calls.get(id);
      if (call === undefined) return this.sendStatus(id, Code.INVALID_ARGUMENT, "StreamID is no longer active");
      return call.onData(frame);
    }
    if (id <= this.lastStreamId) {
      return this.sendStatus(id, Code.INVALID_ARGUMENT, "StreamID cannot be re-used and must increment");
    }
    this.lastStreamId = id;
    let req: RequestEnvelope;
    try {
      req = decodeRequest(frame.bytes, frame.offset, frame.offset + frame.length);
    } catch (e) {
      return this.sendStatus(id, Code.INVALID_ARGUMENT, `unmarshal request error: ${(e as Error).message}`);
    }
    if (this.idleClose || this.server.draining) {
      return this.sendStatus(id, Code.UNAVAILABLE, "server is shutting down");
    }
    const method = this.server.lookup(req.service, req.method);
    if (method instanceof RpcError) return this.sendStatus(id, method.code, method.rawMessage);
    const call = new IncomingCall(this, id, req, method, frame.flags);
    this.calls.set(id, call);
    const interceptors = this.server.interceptors;
    if (interceptors === undefined) call.run();
    else call.runIntercepted(interceptors);
  }

  protected onClose(reason: Error): void {
    const calls = this.calls.values();
    this.calls.clear();
    const err = new RpcError(Code.CANCELED, `connection closed: ${reason.message}`, { cause: reason });
    for (const c of calls) c.abort(err);
  }

  /** @internal */
  callDone(id: number): void {
    this.calls.delete(id);
    if (this.idleClose && this.calls.size === 0) this.finishIdle();
  }

  /** @internal */
  get limit(): number {
    return this.options.maxDataLength;
  }

  /** @internal */
  get highWater(): number {
    return this.options.streamHighWater;
  }

  /** @internal */
  writable(): Promise<void> {
    if (!this.writer.congested || this.closeReason !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off("drain", done);
        this.socket.off("close", done);
        resolve();
      };
      this.socket.on("drain", done);
      this.socket.on("close", done);
    });
  }

  /** @internal Sends a status-only response. */
  sendStatus(id: number, code: Code, message: string): void {
    this.sendResponse(id, { code, message, details: [] }, EMPTY);
  }

  /**
   * @internal Sends a Response; one over the size limit is replaced by RESOURCE_EXHAUSTED, since
   * the reference client fails on an oversized response instead of reporting it.
   */
  sendResponse(id: number, status: StatusFields | undefined, payload: Uint8Array): void {
    if (this.closeReason !== undefined) return;
    const sizes = this.sizes.measure(status, payload.length);
    if (sizes.total > this.options.maxDataLength) {
      return this.sendStatus(id, Code.RESOURCE_EXHAUSTED, oversizeMessage(sizes.total, this.options.maxDataLength));
    }
    const w = this.writer;
    const pos = w.beginWithPayload(id, MessageType.Response, 0, sizes.head, payload);
    w.end(writeResponseHead(w.buffer, pos, status, payload.length, sizes), payload);
  }

  /** @internal Sends a data frame; false when it is over the size limit. */
  sendData(id: number, flags: number, data: Uint8Array): boolean {
    return this.writeData(id, flags, data);
  }
}

/** One call being served. */
class IncomingCall implements CallContext {
  readonly service: string;
  readonly method: string;
  readonly metadata: readonly KeyValue[];
  readonly timeoutNano: number;
  readonly deadline: number | undefined;
  private controller: AbortController | undefined;
  private abortReason: Error | undefined;
  private timer: Deadline | undefined;
  private done = false;
  private readonly input: MessageQueue | undefined;
  private holding = false;

  constructor(
    private readonly conn: ServerConnection,
    private readonly id: number,
    private readonly req: RequestEnvelope,
    private readonly def: RawMethod,
    flags: number,
  ) {
    this.service = req.service;
    this.method = req.method;
    this.metadata = req.metadata;
    this.timeoutNano = req.timeoutNano;
    this.deadline = req.timeoutNano > 0 ? performance.now() + req.timeoutNano / 1e6 : undefined;
    if (def.kind === "client_streaming" || def.kind === "bidi_streaming") {
      this.input = new MessageQueue(conn.highWater, (c) => this.setHold(c), () => undefined);
      // A request that does not announce more data closes the input at once.
      if ((flags & Flag.RemoteOpen) === 0) {
        if (req.payload.length > 0) this.input.push(req.payload);
        this.input.end();
      } else if (req.payload.length > 0) this.input.push(req.payload);
    }
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortReason !== undefined) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  run(): void {
    const t = this.req.timeoutNano;
    if (t < 0) return this.reject(new RpcError(Code.DEADLINE_EXCEEDED, "deadline exceeded before the call started"));
    this.arm(t);
    try {
      switch (this.def.kind) {
        case "unary": {
          const r = this.def.handler(this.req.payload, this);
          if (r instanceof Uint8Array) this.respond(r);
          else
            r.then(
              (v) => this.respond(v),
              (e: unknown) => this.reject(e),
            );
          return;
        }
        case "client_streaming":
          this.def.handler(this.input!, this).then(
            (v) => this.respond(v),
            (e: unknown) => this.reject(e),
          );
          return;
        case "server_streaming":
          void this.stream(this.def.handler(this.req.payload, this));
          return;
        case "bidi_streaming":
          void this.stream(this.def.handler(this.input!, this));
          return;
      }
    } catch (e) {
      this.reject(e);
    }
  }

  /**
   * Runs the handler inside the interceptors: what they resolve with is answered (a server
   * stream's last message when not empty), what they reject with is the status.
   */
  runIntercepted(interceptors: readonly ServerInterceptor[]): void {
    const t = this.req.timeoutNano;
    if (t < 0) return this.reject(new RpcError(Code.DEADLINE_EXCEEDED, "deadline exceeded before the call started"));
    this.arm(t);
    const def = this.def;
    const last: (c: ServerCall) => Promise<Uint8Array> = async (c) => {
      switch (def.kind) {
        case "unary":
          return def.handler(c.payload, c);
        case "client_streaming":
          return def.handler(this.input!, c);
        case "server_streaming":
          await this.pump(def.handler(c.payload, c));
          return EMPTY;
        case "bidi_streaming":
          await this.pump(def.handler(this.input!, c));
          return EMPTY;
      }
    };
    const view: ServerCall = {
      kind: def.kind,
      service: this.service,
      method: this.method,
      metadata: this.metadata,
      timeoutNano: this.timeoutNano,
      deadline: this.deadline,
      signal: this.signal,
      payload: this.input === undefined ? this.req.payload : EMPTY,
    };
    const chain = chainInterceptors(interceptors as readonly Interceptor<ServerCall, Uint8Array>[], last)!;
    let answer: Promise<Uint8Array>;
    try {
      answer = chain(view);
    } catch (e) {
      return this.reject(e);
    }
    answer.then(
      (v) => (def.kind === "server_streaming" || def.kind === "bidi_streaming" ? this.closeStream(v) : this.respond(v)),
      (e: unknown) => this.reject(e),
    );
  }

  private arm(t: number): void {
    if (t > 0) {
      const ms = t / 1e6;
      this.timer = processDeadlines.start(() => this.reject(new RpcError(Code.DEADLINE_EXCEEDED, `deadline of ${ms} ms exceeded`)), Math.ceil(ms));
    }
  }

  private async stream(out: AsyncIterable<Uint8Array>): Promise<void> {
    try {
      await this.pump(out);
      this.closeStream(EMPTY);
    } catch (e) {
      this.reject(e);
    }
  }

  /** Sends a handler's stream of messages; returns once it ended, throws its error. */
  private async pump(out: AsyncIterable<Uint8Array>): Promise<void> {
    for await (const msg of out) {
      if (this.done) return;
      if (!(msg instanceof Uint8Array)) throw new TypeError(`ttrpc: ${this.method} yielded a non-Uint8Array message`);
      if (!this.conn.sendData(this.id, 0, msg)) throw new RpcError(Code.RESOURCE_EXHAUSTED, oversizeMessage(msg.length, this.conn.limit));
      await this.conn.writable();
    }
  }

  /**
   * Ends a stream the server writes: with a closing data frame, or with a closing Response that
   * carries `last` as one last message (which is how the reference client reads it).
   */
  private closeStream(last: Uint8Array): void {
    if (!this.claim()) return;
    if (last.length > 0) this.conn.sendResponse(this.id, undefined, last);
    else this.conn.sendData(this.id, Flag.RemoteClosed | Flag.NoData, EMPTY);
    this.conn.callDone(this.id);
  }

  onData(frame: Frame): void {
    const q = this.input;
    // A bare close (remote-closed, no data) says nothing new when there is no open input: ignore it.
    const bareClose = (frame.flags & Flag.RemoteClosed) !== 0 && frame.length === 0;
    if (bareClose && (q === undefined || q.closed)) return;
    if (q === undefined) {
      return this.reject(new RpcError(Code.INVALID_ARGUMENT, `data frame on stream ${this.id} of a method that takes no client stream`));
    }
    if (q.closed) {
      return this.reject(new RpcError(Code.INVALID_ARGUMENT, `data frame on stream ${this.id} after the client closed it`));
    }
    if ((frame.flags & Flag.NoData) === 0) q.push(frame.data);
    if ((frame.flags & Flag.RemoteClosed) !== 0) q.end();
  }

  private setHold(on: boolean): void {
    this.holding = toggleHold(this.conn, this.holding, on);
  }

  /** Marks the call finished; false if it already was. The caller then answers and calls done(). */
  private claim(): boolean {
    if (this.done) return false;
    this.done = true;
    this.timer?.clear();
    this.setHold(false);
    return true;
  }

  private respond(payload: Uint8Array): void {
    if (!this.claim()) return;
    if (!(payload instanceof Uint8Array)) {
      this.conn.sendStatus(this.id, Code.INTERNAL, `${this.method} returned a non-Uint8Array response`);
    } else this.conn.sendResponse(this.id, undefined, payload);
    this.conn.callDone(this.id);
  }

  /** Ends the call with an error status and aborts the handler. */
  reject(e: unknown): void {
    const err = RpcError.from(e);
    if (!this.claim()) return;
    this.input?.fail(err);
    this.conn.sendResponse(this.id, err.toStatus(), EMPTY);
    this.conn.callDone(this.id);
    this.signalAbort(err);
  }

  /** The connection is gone: abort the handler without answering. */
  abort(err: RpcError): void {
    if (!this.claim()) return;
    this.input?.fail(err);
    this.signalAbort(err);
  }

  private signalAbort(err: Error): void {
    this.abortReason = err;
    this.controller?.abort(err);
  }
}
