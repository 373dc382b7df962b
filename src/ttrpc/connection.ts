import type { Duplex } from "node:stream";
import { type FrameBudget, processFrameBudget } from "./budget.js";
import { BusyPoll, checkBusyPollMicros } from "../internal/busy-poll.js";
import { CloseOnce, closeAtEnd } from "../internal/close-once.js";
import { ClosedError } from "./errors.js";
import { type Frame, FrameDecoder, MessageType, checkMaxDataLength } from "./frame.js";
import { ReadHolds } from "../internal/read-hold.js";
import { FrameWriter } from "./frame-writer.js";

/** Options shared by clients and servers. */
export interface ConnectionOptions {
  /** Largest frame data sent or accepted. Default 4 MiB, the reference's limit. */
  maxDataLength?: number;
  /** Inbound messages a stream may queue unread before the connection stops reading. Default 64. */
  streamHighWater?: number;
  /**
   * The shared cap on bytes held for frames split across reads; a connection whose frame it
   * refuses is closed with RpcError RESOURCE_EXHAUSTED. Default `processFrameBudget` (64 MiB).
   */
  frameBudget?: FrameBudget;
  /**
   * Microseconds the event loop keeps polling after frames are written, in a sustained run of
   * messages and while the peer's answers come within that time, instead of sleeping until they
   * wake it (see "Busy polling" in docs/performance.md); 0 turns it off. Default 0. Over an NRI mux, the mux does it (its own
   * busyPollMicros).
   */
  busyPollMicros?: number;
}

/** Validated connection options with their defaults. */
export interface ResolvedConnectionOptions {
  readonly maxDataLength: number;
  readonly streamHighWater: number;
  readonly frameBudget: FrameBudget;
  readonly busyPollMicros: number;
}

/** Validates ConnectionOptions in one place. */
export function resolveConnectionOptions(options: ConnectionOptions = {}): ResolvedConnectionOptions {
  const hw = options.streamHighWater ?? 64;
  if (!Number.isSafeInteger(hw) || hw < 1) {
    throw new RangeError(`ttrpc: streamHighWater ${hw} is not a positive integer`);
  }
  return {
    maxDataLength: checkMaxDataLength(options.maxDataLength),
    streamHighWater: hw,
    frameBudget: options.frameBudget ?? processFrameBudget,
    busyPollMicros: checkBusyPollMicros("ttrpc", options.busyPollMicros, 0),
  };
}

/**
 * The socket side shared by client and server connections: decodes frames from the socket,
 * batches frames to it, stops reading while the socket is congested or a stream's queue is
 * full, and reports the connection's end exactly once.
 */
export abstract class FrameConnection {
  protected readonly decoder: FrameDecoder;
  protected readonly writer: FrameWriter;
  protected readonly options: ResolvedConnectionOptions;
  private readonly holds: ReadHolds;
  private readonly poll: BusyPoll;
  private waitingForDrain = false;
  private readonly shut = new CloseOnce();

  constructor(
    protected readonly socket: Duplex,
    options: ConnectionOptions,
  ) {
    this.options = resolveConnectionOptions(options);
    this.decoder = new FrameDecoder({ maxDataLength: this.options.maxDataLength, budget: this.options.frameBudget });
    this.poll = new BusyPoll(this.options.busyPollMicros);
    this.writer = new FrameWriter(socket, () => this.poll.wrote());
    this.holds = new ReadHolds(socket);
    socket.on("data", this.onData);
    socket.on("end", this.onEnd);
    socket.on("error", this.onError);
    socket.on("close", this.onSocketClose);
    socket.on("drain", this.onDrain);
  }

  /** Settles with the reason once the connection has ended. */
  get closed(): Promise<Error> {
    return this.shut.closed;
  }

  /** Bytes held for a frame received in part, counted in the connection's frameBudget. */
  get partialFrameBytes(): number {
    return this.decoder.buffered;
  }

  /** The reason the connection ended, or undefined while it is open. */
  get closeReason(): Error | undefined {
    return this.shut.reason;
  }

  /**
   * Whether to stop reading while the socket's writes are congested. Right for a server (each
   * request read makes a response to write); wrong for a client, whose reads never cause writes:
   * if both sides paused, large messages in flight both ways would deadlock the connection.
   */
  protected readonly pauseReadsWhileCongested: boolean = true;

  protected abstract onFrame(frame: Frame): void;

  /** Called once when the connection ends; every pending call must settle here. */
  protected abstract onClose(reason: Error): void;

  /** Stops reading the socket until a matching release() (nested holds count). */
  hold(): void {
    this.holds.hold();
  }

  /** Undoes one hold(); reading resumes when none is left. */
  release(): void {
    this.holds.release(this.shut.reason === undefined);
  }

  /** Ends the connection with `reason`, destroying the socket. */
  close(reason: Error = new ClosedError("ttrpc: connection closed")): void {
    if (!this.shut.begin(reason)) return;
    this.decoder.dispose();
    this.writer.close();
    this.socket.destroy();
    this.onClose(reason);
    this.shut.settle();
  }

  /** Queues a data frame; false (nothing sent) when it is over the size limit. */
  protected writeData(id: number, flags: number, data: Uint8Array): boolean {
    if (data.length > this.options.maxDataLength) return false;
    if (this.shut.reason === undefined) this.writer.end(this.writer.beginWithPayload(id, MessageType.Data, flags, 0, data), data);
    return true;
  }

  /** Flushes queued frames, then half-closes the socket; settles once that is written or the connection has ended. */
  protected endWrites(): Promise<void> {
    this.writer.flush();
    return new Promise((resolve) => {
      if (this.shut.reason !== undefined) return resolve();
      void this.shut.closed.then(() => resolve());
      this.socket.end(() => resolve());
    });
  }

  private readonly onData = (chunk: Uint8Array): void => {
    this.poll.received();
    let frames: Frame[];
    try {
      frames = this.decoder.decode(chunk);
    } catch (err) {
      // Only a partial-frame budget refusal throws here.
      return this.close(err as Error);
    }
    for (let i = 0; i < frames.length; i++) {
      if (this.shut.reason !== undefined) return;
      this.onFrame(frames[i]!);
    }
    if (this.pauseReadsWhileCongested && !this.waitingForDrain && this.writer.congested) {
      this.waitingForDrain = true;
      this.hold();
    }
  };

  private readonly onDrain = (): void => {
    if (this.waitingForDrain) {
      this.waitingForDrain = false;
      this.release();
    }
  };

  private readonly onEnd = (): void => closeAtEnd(this.decoder, this, "ttrpc: connection closed by peer");

  private readonly onError = (err: Error): void => {
    // A transport that ended in order (a mux trunk closing) says so itself.
    this.close(err instanceof ClosedError ? err : new ClosedError(`ttrpc: connection error: ${err.message}`, { cause: err }));
  };

  private readonly onSocketClose = (): void => {
    this.close(new ClosedError("ttrpc: connection closed"));
  };
}
