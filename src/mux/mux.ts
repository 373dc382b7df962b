import { Duplex } from "node:stream";
import { BusyPoll, checkBusyPollMicros } from "../internal/busy-poll.js";
import { CloseOnce, closeAtEnd } from "../internal/close-once.js";
import { ClosedError } from "../internal/errors.js";
import { ReadHolds, toggleHold } from "../internal/read-hold.js";
import { MuxError } from "./errors.js";
import { MAX_READ_PAYLOAD, MAX_WRITE_PAYLOAD, MuxDecoder, type MuxSegment, encodeMuxFrames } from "./trunk-frame.js";

/** The conn id the reference reserves; never opened. */
export const RESERVED_CONN_ID = 0;
/** The plugin's ttrpc server (the runtime is its client). */
export const PLUGIN_SERVICE_CONN = 1;
/** The runtime's ttrpc server (the plugin is its client). */
export const RUNTIME_SERVICE_CONN = 2;

/** Options of a Mux. */
export interface MuxOptions {
  /** Largest payload of a mux frame written. Default 4096, the most the reference reader takes. */
  maxWritePayload?: number;
  /** Largest payload of a mux frame read; more is a MuxError. Default 10 + 4 MiB. */
  maxReadPayload?: number;
  /** Bytes a connection buffers unread before the trunk stops being read. Default 256 KiB. */
  connHighWaterMark?: number;
  /**
   * Microseconds the event loop keeps polling after a write to the trunk, in a sustained run of
   * messages and while the peer's answers come within that time (see "Busy polling" in
   * docs/performance.md); 0 turns it off. Default 0.
   */
  busyPollMicros?: number;
}

function positiveInt(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new RangeError(`mux: ${name} ${value} is not an integer from 1 to ${max}`);
  }
  return value;
}

/**
 * NRI's trunk multiplexer: logical byte-stream connections, by conn id, over one socket. Each
 * connection is a Duplex that ttrpc clients and servers run on unchanged. There is no handshake
 * and no close signal in the protocol: bytes for a conn id not opened are dropped, as the
 * reference does, and closing a connection only stops it locally.
 */
export class Mux {
  private readonly conns = new Map<number, MuxConnection>();
  private readonly decoder: MuxDecoder;
  private readonly maxWrite: number;
  /** @internal */
  readonly highWaterMark: number;
  private readonly holds: ReadHolds;
  private readonly poll: BusyPoll;
  /** The reason end() was given, once it was. */
  private ending: Error | undefined;
  private readonly shut = new CloseOnce();

  constructor(
    readonly trunk: Duplex,
    options: MuxOptions = {},
  ) {
    this.maxWrite = positiveInt("maxWritePayload", options.maxWritePayload, MAX_WRITE_PAYLOAD, 0xffffffff);
    this.decoder = new MuxDecoder(positiveInt("maxReadPayload", options.maxReadPayload, MAX_READ_PAYLOAD, 0xffffffff));
    this.highWaterMark = positiveInt("connHighWaterMark", options.connHighWaterMark, 256 << 10, 1 << 30);
    this.holds = new ReadHolds(trunk);
    this.poll = new BusyPoll(checkBusyPollMicros("mux", options.busyPollMicros, 0));
    trunk.on("data", this.onData);
    trunk.on("end", this.onEnd);
    trunk.on("error", this.onTrunkError);
    trunk.on("close", () => this.close(new ClosedError("mux: trunk closed")));
  }

  /** Settles with the reason once the trunk has closed. */
  get closed(): Promise<Error> {
    return this.shut.closed;
  }

  /** The reason the trunk closed, or undefined while it is open. */
  get closeReason(): Error | undefined {
    return this.shut.reason;
  }

  /** The connection with id `connId`, opened on first use. */
  open(connId: number): MuxConnection {
    if (!Number.isInteger(connId) || connId < 0 || connId > 0xffffffff) {
      throw new RangeError(`mux: conn id ${connId} is not a 32-bit unsigned integer`);
    }
    if (connId === RESERVED_CONN_ID) throw new RangeError(`mux: conn id ${connId} is reserved`);
    const closed = this.shut.reason;
    if (closed !== undefined) throw new ClosedError(`mux: cannot open conn ${connId}: ${closed.message}`, { cause: closed });
    let c = this.conns.get(connId);
    if (c === undefined) {
      c = new MuxConnection(this, connId);
      this.conns.set(connId, c);
    }
    return c;
  }

  /** Closes the trunk and, with `reason`, every connection on it. */
  close(reason: Error = new ClosedError("mux: closed")): void {
    // Once end() is under way, the trunk closing (by us or by the peer, which saw our end) is
    // the end asked for.
    if (this.ending !== undefined && reason instanceof ClosedError) reason = this.ending;
    if (!this.shut.begin(reason)) return;
    const conns = [...this.conns.values()];
    this.conns.clear();
    // A connection nobody listens to for errors is ended quietly: an 'error' with no listener
    // would take the process down. Its reason stays readable as `closeReason`.
    for (const c of conns) c.destroy(c.listenerCount("error") > 0 ? reason : undefined);
    this.trunk.destroy();
    this.shut.settle();
  }

  /**
   * Graceful close: ends every connection's writes, lets what they queued reach the trunk,
   * half-closes the trunk once that is written, and then closes with `reason`. What a peer was
   * answered just before is not lost, as it can be with close(). Settles like `closed`.
   */
  end(reason: Error = new ClosedError("mux: closed")): Promise<Error> {
    if (this.shut.reason === undefined && this.ending === undefined) {
      this.ending = reason;
      void Promise.all([...this.conns.values()].map(writesEnded)).then(() => {
        if (this.shut.reason === undefined) this.trunk.end(() => this.close(reason));
      });
    }
    return this.shut.closed;
  }

  /** @internal */
  write(connId: number, data: Uint8Array, cb: (err?: Error | null) => void): void {
    if (this.shut.reason !== undefined) return cb(this.shut.reason);
    this.trunk.write(encodeMuxFrames(connId, data, this.maxWrite), (err) => {
      if (err === null || err === undefined) return cb();
      // The write callback hears of a dead trunk before its 'error' event: close with the
      // reason first, so every connection reports that and not the bare errno.
      this.onTrunkError(err as NodeJS.ErrnoException);
      cb(this.shut.reason);
    });
    this.poll.wrote();
  }

  private readonly onTrunkError = (e: NodeJS.ErrnoException): void => {
    const byPeer = e.code === "EPIPE" || e.code === "ECONNRESET";
    if (byPeer) this.close(new ClosedError(`mux: trunk closed by peer: ${e.message}`, { cause: e }));
    else this.close(new MuxError(`mux: trunk error: ${e.message}`, { cause: e }));
  };

  /** @internal */
  forget(conn: MuxConnection): void {
    if (this.conns.get(conn.connId) === conn) this.conns.delete(conn.connId);
  }

  /** @internal Stops reading the trunk until release(). */
  hold(): void {
    this.holds.hold();
  }

  /** @internal */
  release(): void {
    this.holds.release(this.shut.reason === undefined);
  }

  private readonly onData = (chunk: Uint8Array): void => {
    this.poll.received();
    let segments;
    try {
      segments = this.decoder.decode(chunk);
    } catch (e) {
      return this.close(e as Error);
    }
    // A message of more than one frame (anything over 4096 bytes) arrives as consecutive
    // segments of one conn: they are delivered as one chunk, so the connection above decodes it
    // whole instead of holding and growing a partial frame.
    for (let i = 0; i < segments.length; ) {
      const connId = segments[i]!.connId;
      let j = i + 1;
      while (j < segments.length && segments[j]!.connId === connId) j++;
      this.conns.get(connId)?.deliver(j - i === 1 ? segments[i]!.data : joinSegments(segments, i, j));
      i = j;
    }
  };

  private readonly onEnd = (): void => closeAtEnd(this.decoder, this, "mux: trunk closed by peer");
}

/** The data of segments[from, to) as one chunk, in memory of its own (see encodeMuxFrames). */
function joinSegments(segments: readonly MuxSegment[], from: number, to: number): Uint8Array {
  let n = 0;
  for (let i = from; i < to; i++) n += segments[i]!.data.length;
  const out = Buffer.allocUnsafeSlow(n);
  let pos = 0;
  for (let i = from; i < to; i++) {
    out.set(segments[i]!.data, pos);
    pos += segments[i]!.data.length;
  }
  return out;
}

/** Ends a connection's writes; settles once what it queued has been written to the trunk. */
function writesEnded(conn: MuxConnection): Promise<void> {
  if (conn.writableFinished || conn.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    conn.once("finish", resolve);
    conn.once("close", resolve);
    if (!conn.writableEnded) conn.end();
  });
}

/** One logical connection of a Mux: a Duplex carrying that conn id's bytes. */
export class MuxConnection extends Duplex {
  private holding = false;

  constructor(
    private readonly mux: Mux,
    readonly connId: number,
  ) {
    super({ readableHighWaterMark: mux.highWaterMark, allowHalfOpen: true });
  }

  /** Why the trunk under this connection closed, or undefined while it is open. */
  get closeReason(): Error | undefined {
    return this.mux.closeReason;
  }

  /** @internal Bytes for this connection from the trunk. */
  deliver(data: Uint8Array): void {
    if (this.destroyed || this.readableEnded) return;
    if (!this.push(data)) this.holding = toggleHold(this.mux, this.holding, true);
  }

  /** @internal Duplex plumbing. */
  override _read(): void {
    this.holding = toggleHold(this.mux, this.holding, false);
  }

  /** @internal Duplex plumbing. */
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.mux.write(this.connId, chunk, cb);
  }

  /** @internal Duplex plumbing. */
  override _final(cb: (err?: Error | null) => void): void {
    cb();
  }

  /** @internal Duplex plumbing. */
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.mux.forget(this);
    this.holding = toggleHold(this.mux, this.holding, false);
    // Our own readers learn the end; the protocol has no close signal for the peer.
    cb(err);
  }
}
