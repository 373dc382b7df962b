import type { Duplex } from "node:stream";
import { type ConnectionOptions, FrameConnection } from "./connection.js";
import { type RequestEnvelope, RequestSizes, type ResponseEnvelope, decodeResponse, writeRequestHead } from "./envelope.js";
import { ProtocolError, RpcError } from "./errors.js";
import { Flag, type Frame, MessageType } from "./frame.js";
import { type MetadataInit, toKeyValues } from "./metadata.js";
import { MessageQueue } from "./queue.js";
import { toggleHold } from "../internal/read-hold.js";
import { Code } from "./status.js";
import { type Deadline, processDeadlines } from "./deadlines.js";
import { chainInterceptors, checkInterceptors } from "../internal/interceptor.js";
import type { ClientCall, ClientInterceptor, MethodKind } from "./interceptors.js";
import { StreamTable } from "./stream-table.js";

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call locally (ttrpc has no cancel frame): it rejects with CANCELED. */
  signal?: AbortSignal | undefined;
  /** Deadline from now; sent as timeout_nano and enforced locally with DEADLINE_EXCEEDED. */
  timeoutMs?: number | undefined;
  /** Request metadata. */
  metadata?: MetadataInit | undefined;
}

/** Options of a Client. */
export interface ClientOptions extends ConnectionOptions {
  /**
   * Wrap every call, the first outermost (see ClientInterceptor); none by default, and then a
   * call runs with no step between it and its frames.
   */
  interceptors?: readonly ClientInterceptor[];
}

const EMPTY: Uint8Array = new Uint8Array(0);
const MAX_STREAM_ID = 0xffffffff;

/** The reference's text for a message over the size limit. */
export function oversizeMessage(length: number, max: number): string {
  return `message length ${length} exceed maximum message size of ${max}`;
}

interface PendingStream {
  onFrame(frame: Frame): void;
  fail(err: Error): void;
}

/**
 * A ttrpc client over any Duplex (a unix socket in practice). Calls run concurrently on one
 * connection with odd stream ids; responses may arrive in any order.
 */
export class Client extends FrameConnection {
  private nextId = 1;
  private readonly streams = new StreamTable<PendingStream>();
  private readonly sizes = new RequestSizes();
  private drainWaiters: (() => void)[] = [];
  protected override readonly pauseReadsWhileCongested = false;
  private readonly interceptors: readonly ClientInterceptor[] | undefined;
  /** The interceptors around a unary call's last step, or undefined when there are none. */
  private readonly chain: ((call: ClientCall) => Promise<Uint8Array>) | undefined;

  constructor(socket: Duplex, options: ClientOptions = {}) {
    super(socket, options);
    this.interceptors = checkInterceptors("ttrpc: interceptors", options.interceptors);
    this.chain = chainInterceptors(this.interceptors, (c) => new Promise<Uint8Array>((resolve, reject) => this.start(new UnaryCall(this, resolve, reject), c.service, c.method, c.payload, 0, callOptions(c))));
    socket.on("drain", () => this.wakeWriters());
  }

  /** Calls in flight. */
  get pending(): number {
    return this.streams.size;
  }

  /** A unary call with raw payload bytes: resolves with the response payload. */
  call(service: string, method: string, payload: Uint8Array, options: CallOptions = {}): Promise<Uint8Array> {
    if (this.chain !== undefined) return this.chain(clientCall("unary", service, method, payload, options));
    return new Promise<Uint8Array>((resolve, reject) => {
      const call = new UnaryCall(this, resolve, reject);
      this.start(call, service, method, payload, 0, options);
    });
  }

  /** A server-streaming call: one request, a stream of responses. */
  serverStream(service: string, method: string, payload: Uint8Array, options: CallOptions = {}): AsyncIterable<Uint8Array> {
    const call = new StreamCall(this, false, true, undefined);
    this.open(call, "server_streaming", service, method, payload, options);
    return call.output();
  }

  /** A client-streaming call: a stream of requests, one response. */
  clientStream(service: string, method: string, input: AsyncIterable<Uint8Array>, options: CallOptions = {}): Promise<Uint8Array> {
    const call = new StreamCall(this, true, false, input);
    const result = call.result();
    this.open(call, "client_streaming", service, method, EMPTY, options);
    return result;
  }

  /** A bidirectional streaming call. */
  bidiStream(service: string, method: string, input: AsyncIterable<Uint8Array>, options: CallOptions = {}): AsyncIterable<Uint8Array> {
    const call = new StreamCall(this, true, true, input);
    this.open(call, "bidi_streaming", service, method, EMPTY, options);
    return call.output();
  }

  /** Opens a stream, through the interceptors when there are any: their outcome ends it. */
  private open(call: StreamCall, kind: MethodKind, service: string, method: string, payload: Uint8Array, options: CallOptions): void {
    const flags = kind === "server_streaming" ? Flag.RemoteClosed : Flag.RemoteOpen;
    // The caller holds this stream's reader already: a chain of its own sends this very stream.
    const chain = chainInterceptors(this.interceptors, (c) => call.intercepted(() => this.start(call, c.service, c.method, c.payload, flags, callOptions(c))));
    if (chain === undefined) return this.start(call, service, method, payload, flags, options);
    chain(clientCall(kind, service, method, payload, options)).then(
      (answer) => call.complete(answer),
      (e: unknown) => call.complete(e instanceof Error ? e : new Error(String(e))),
    );
  }

  private start(call: UnaryCall | StreamCall, service: string, method: string, payload: Uint8Array, flags: number, options: CallOptions): void {
    const reason = this.closeReason;
    if (reason !== undefined) return call.fail(closedError(reason));
    if (this.nextId > MAX_STREAM_ID) {
      return call.fail(new RpcError(Code.RESOURCE_EXHAUSTED, "stream ids exhausted on this connection"));
    }
    const timeoutMs = options.timeoutMs;
    if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0)) {
      return call.fail(new RangeError(`ttrpc: timeoutMs ${timeoutMs} is not a finite number >= 0`));
    }
    const req: RequestEnvelope = {
      service,
      method,
      payload,
      timeoutNano: timeoutMs === undefined ? 0 : Math.max(1, Math.round(timeoutMs * 1e6)),
      metadata: toKeyValues(options.metadata),
    };
    const sizes = this.sizes.measure(req);
    if (sizes.total > this.options.maxDataLength) {
      return call.fail(new RpcError(Code.RESOURCE_EXHAUSTED, oversizeMessage(sizes.total, this.options.maxDataLength)));
    }
    const id = this.nextId;
    this.nextId += 2;
    call.id = id;
    this.streams.set(id, call);
    if (!call.arm(options, timeoutMs)) return;
    const w = this.writer;
    const pos = w.beginWithPayload(id, MessageType.Request, flags, sizes.head, payload);
    w.end(writeRequestHead(w.buffer, pos, req, sizes), payload);
    if (call instanceof StreamCall) call.started();
  }

  /** @internal Sends a data frame on a stream; false if it is over the limit. */
  sendData(id: number, flags: number, data: Uint8Array): boolean {
    return this.writeData(id, flags, data);
  }

  /** @internal Resolves when the socket can take more data. */
  writable(): Promise<void> {
    if (!this.writer.congested || this.closeReason !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  /** @internal */
  get maxDataLength(): number {
    return this.options.maxDataLength;
  }

  /** @internal */
  get streamHighWater(): number {
    return this.options.streamHighWater;
  }

  private wakeWriters(): void {
    const w = this.drainWaiters;
    this.drainWaiters = [];
    for (const f of w) f();
  }

  protected onFrame(frame: Frame): void {
    // Frames for streams no longer waiting (late answers after a timeout or cancel) are dropped.
    this.streams.get(frame.streamId)?.onFrame(frame);
  }

  protected onClose(reason: Error): void {
    const err = closedError(reason);
    const calls = this.streams.values();
    this.streams.clear();
    for (const c of calls) c.fail(err);
    this.wakeWriters();
  }
}

/** A call as interceptors get it: the options spelled out, the metadata a list of its own. */
function clientCall(kind: MethodKind, service: string, method: string, payload: Uint8Array, o: CallOptions): ClientCall {
  return { kind, service, method, payload, metadata: [...toKeyValues(o.metadata)], timeoutMs: o.timeoutMs, signal: o.signal };
}

/** The options an intercepted call is sent with. */
function callOptions(c: ClientCall): CallOptions {
  return { signal: c.signal, timeoutMs: c.timeoutMs, metadata: c.metadata };
}

function closedError(reason: Error): RpcError {
  return new RpcError(Code.UNAVAILABLE, `connection closed: ${reason.message}`, { cause: reason });
}

function deadlineError(ms: number): RpcError {
  return new RpcError(Code.DEADLINE_EXCEEDED, `deadline of ${ms} ms exceeded`);
}

function canceledError(signal: AbortSignal): RpcError {
  const r: unknown = signal.reason;
  const why = r instanceof Error ? r.message : r === undefined ? "aborted" : String(r);
  return new RpcError(Code.CANCELED, `call canceled: ${why}`, { cause: r });
}

/** What every call shares: its id, deadline timer and abort listener. */
abstract class BaseCall implements PendingStream {
  id = 0;
  protected settled = false;
  private timer: Deadline | undefined;
  private signal: AbortSignal | undefined;
  private readonly onAbort = (): void => this.fail(canceledError(this.signal!));

  constructor(protected readonly client: Client) {}

  /** Sets up the deadline and cancellation; false if the call already ended. */
  arm(options: CallOptions, timeoutMs: number | undefined): boolean {
    const signal = options.signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.fail(canceledError(signal));
        return false;
      }
      this.signal = signal;
      signal.addEventListener("abort", this.onAbort, { once: true });
    }
    if (timeoutMs !== undefined) {
      this.timer = processDeadlines.start(() => this.fail(deadlineError(timeoutMs)), timeoutMs);
    }
    return true;
  }

  /** Releases the id, timer and listener; true the first time only. */
  protected settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.id !== 0) this.client.forget(this.id);
    this.timer?.clear();
    this.signal?.removeEventListener("abort", this.onAbort);
    return true;
  }

  /** The error a response frame stands for, or undefined for success. */
  protected responseError(frame: Frame): Error | undefined {
    if (frame.oversize !== 0) {
      return new RpcError(Code.RESOURCE_EXHAUSTED, oversizeMessage(frame.oversize, this.client.maxDataLength));
    }
    return undefined;
  }

  /** The decoded Response of a response frame; undefined for other frames or when it fails the call. */
  protected response(frame: Frame): ResponseEnvelope | undefined {
    if (frame.type !== MessageType.Response) return undefined;
    try {
      return decodeResponse(frame.bytes, frame.offset, frame.offset + frame.length);
    } catch (e) {
      this.fail(e as Error);
      return undefined;
    }
  }

  abstract onFrame(frame: Frame): void;
  abstract fail(err: Error): void;
}

class UnaryCall extends BaseCall {
  constructor(
    client: Client,
    private readonly resolve: (v: Uint8Array) => void,
    private readonly reject: (e: Error) => void,
  ) {
    super(client);
  }

  onFrame(frame: Frame): void {
    const err = this.responseError(frame);
    if (err !== undefined) return this.fail(err);
    if (frame.type === MessageType.Data) {
      return this.fail(new ProtocolError(`ttrpc: stream ${this.id}: data frame on a unary call`));
    }
    const res = this.response(frame);
    if (res === undefined) return;
    if (!this.settle()) return;
    const st = res.status;
    if (st !== undefined && st.code !== Code.OK) this.reject(RpcError.fromStatus(st));
    else this.resolve(res.payload);
  }

  fail(err: Error): void {
    if (this.settle()) this.reject(err);
  }
}

class StreamCall extends BaseCall {
  private readonly queue: MessageQueue | undefined;
  private resolveResult: ((v: Uint8Array) => void) | undefined;
  private rejectResult: ((e: Error) => void) | undefined;
  private failure: Error | undefined;
  private localClosed: boolean;
  private holding = false;
  /** Set while interceptors wrap the stream: its end settles their `next` instead of the reader. */
  private hook: { resolve: (v: Uint8Array) => void; reject: (e: Error) => void } | undefined;

  constructor(
    client: Client,
    private readonly clientStreaming: boolean,
    serverStreaming: boolean,
    private readonly input: AsyncIterable<Uint8Array> | undefined,
  ) {
    super(client);
    this.localClosed = !clientStreaming;
    if (serverStreaming) {
      this.queue = new MessageQueue(
        client.streamHighWater,
        (congested) => this.setHold(congested),
        () => this.abandon(),
      );
    }
  }

  output(): AsyncIterable<Uint8Array> {
    return this.queue!;
  }

  result(): Promise<Uint8Array> {
    return new Promise<Uint8Array>((resolve, reject) => {
      if (this.failure !== undefined) return reject(this.failure);
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
  }

  /**
   * The last step of an intercepted stream: sends it, and settles when it ends (with the
   * response of a client stream, an empty answer for a server stream) or fails.
   */
  intercepted(send: () => void): Promise<Uint8Array> {
    return new Promise<Uint8Array>((resolve, reject) => {
      this.hook = { resolve, reject };
      send();
    });
  }

  /**
   * The interceptors' outcome: an answer ends the stream (for a server stream, the answer is a
   * last message when not empty), an error fails it. A stream still open (an interceptor
   * answered without waiting for `next`) is ended first.
   */
  complete(outcome: Uint8Array | Error): void {
    this.hook = undefined;
    if (this.settle()) this.release();
    if (this.queue !== undefined && !(outcome instanceof Error) && outcome.length > 0) this.queue.push(outcome);
    this.deliver(outcome);
  }

  /** The request frame is queued: start sending the input stream. */
  started(): void {
    if (this.input !== undefined && !this.settled) void this.pump(this.input);
  }

  private async pump(input: AsyncIterable<Uint8Array>): Promise<void> {
    const it = input[Symbol.asyncIterator]();
    try {
      for (;;) {
        await this.client.writable();
        if (this.settled) break;
        const r = await it.next();
        if (this.settled) break;
        if (r.done === true) {
          this.closeSend();
          return;
        }
        if (!this.client.sendData(this.id, 0, r.value)) {
          this.fail(new RpcError(Code.RESOURCE_EXHAUSTED, oversizeMessage(r.value.length, this.client.maxDataLength)));
          break;
        }
      }
    } catch (e) {
      this.fail(e instanceof Error ? e : new Error(String(e)));
    }
    await it.return?.();
  }

  private closeSend(): void {
    if (this.localClosed) return;
    this.localClosed = true;
    if (this.client.closeReason === undefined) this.client.sendData(this.id, Flag.RemoteClosed | Flag.NoData, EMPTY);
  }

  private setHold(on: boolean): void {
    this.holding = toggleHold(this.client, this.holding, on);
  }

  /** The reader stopped early: forget the stream and close our side. */
  private abandon(): void {
    this.setHold(false);
    if (!this.settle()) return;
    if (this.clientStreaming) this.closeSend();
  }

  onFrame(frame: Frame): void {
    const err = this.responseError(frame);
    if (err !== undefined) return this.fail(err);
    if (frame.type === MessageType.Data) {
      if (this.queue === undefined) {
        return this.fail(new ProtocolError(`ttrpc: stream ${this.id}: data frame on a call without server streaming`));
      }
      if ((frame.flags & Flag.NoData) === 0) this.queue.push(frame.data);
      if ((frame.flags & Flag.RemoteClosed) !== 0) this.finish(EMPTY);
      return;
    }
    const res = this.response(frame);
    if (res === undefined) return;
    const st = res.status;
    if (st !== undefined && st.code !== Code.OK) return this.fail(RpcError.fromStatus(st));
    // A closing response may carry one last message (the reference client reads it as one).
    if (this.queue !== undefined && res.payload.length > 0) this.queue.push(res.payload);
    this.finish(res.payload);
  }

  private finish(payload: Uint8Array): void {
    if (!this.settle()) return;
    // A server stream's messages, the closing response's included, are in its queue already.
    if (this.hook !== undefined) return this.hook.resolve(this.queue === undefined ? payload : EMPTY);
    this.deliver(payload);
  }

  fail(err: Error): void {
    if (!this.settle()) return;
    this.release();
    if (this.hook !== undefined) return this.hook.reject(err);
    this.deliver(err);
  }

  /** What an ended call still holds: the read hold, and our side of a client stream. */
  private release(): void {
    this.setHold(false);
    if (this.clientStreaming && this.id !== 0) this.closeSend();
  }

  /** Hands the outcome to the reader: the result, the end of the messages, or the error. */
  private deliver(outcome: Uint8Array | Error): void {
    if (outcome instanceof Error) {
      this.failure = outcome;
      this.queue?.fail(outcome);
      this.rejectResult?.(outcome);
    } else {
      this.queue?.end();
      this.resolveResult?.(outcome);
    }
  }
}
