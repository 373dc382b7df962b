import { unlink } from "node:fs/promises";
import { type Server, type Socket, createServer } from "node:net";
import { basename } from "node:path";
import { ProxiedConnection } from "./proxied-connection.js";
import type { Direction, SessionRecord } from "./session-decoder.js";
import { connectUnix } from "../api/socket.js";

/** Options of a CaptureProxy. */
export interface CaptureProxyOptions {
  /** Socket the plugins connect to (a stale socket file is replaced). */
  listen: string;
  /** The runtime's socket every connection is forwarded to. */
  upstream: string;
  /**
   * Capture path prefix (a trailing `.index.json` is dropped): the first connection is written
   * to PREFIX.index.json, PREFIX.p2r.bin and PREFIX.r2p.bin, the n-th to PREFIX-n.*.
   */
  out: string;
  /** Each decoded record as its bytes pass, with the capture's session name; decoding is off without it. */
  onRecord?: (session: string, record: SessionRecord) => void;
  /** A connection ended and its capture is complete on disk. */
  onSession?: (session: RecordedSession) => void;
  /** A connection that could not be forwarded (the upstream refused it), or whose capture could not be written. */
  onError?: (error: Error) => void;
}

/** One recorded connection. */
export interface RecordedSession {
  readonly session: string;
  readonly indexPath: string;
  /** Bytes forwarded each way. */
  readonly bytes: Record<Direction, number>;
}

/** Connects upstream keeping the write side open after the peer ends its own (half-closes travel through). */
function dial(path: string): Promise<Socket> {
  return connectUnix(path, { allowHalfOpen: true, what: "record: cannot connect to upstream" });
}

/**
 * A transparent proxy between plugins and a runtime socket: every byte is forwarded unchanged,
 * each read recorded with its time in the capture format, and optionally decoded as it passes.
 * Half-closes travel through, so either side may finish first.
 */
export class CaptureProxy {
  private server: Server | undefined;
  private count = 0;
  /** Each open connection, with its end: reported, capture written. */
  private readonly live = new Map<ProxiedConnection, Promise<void>>();
  private readonly prefix: string;

  constructor(private readonly options: CaptureProxyOptions) {
    this.prefix = options.out.replace(/\.index\.json$/u, "");
  }

  /** Starts listening. */
  async start(): Promise<void> {
    await unlink(this.options.listen).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "ENOENT") throw e;
    });
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (s) => void this.accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.listen, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.server = server;
  }

  /** Stops listening, cuts every connection still open and writes their captures. */
  async close(): Promise<void> {
    const stopped = new Promise<void>((r) => (this.server === undefined ? r() : this.server.close(() => r())));
    const open = [...this.live];
    for (const [conn] of open) conn.close();
    await Promise.all([stopped, ...open.map(([, reported]) => reported)]);
  }

  private async accept(plugin: Socket): Promise<void> {
    let runtime: Socket;
    try {
      runtime = await dial(this.options.upstream);
    } catch (e) {
      plugin.destroy();
      this.options.onError?.(e as Error);
      return;
    }
    const n = ++this.count;
    const prefix = n === 1 ? this.prefix : `${this.prefix}-${n}`;
    const session = basename(prefix);
    const { listen, upstream, onRecord } = this.options;
    const conn = new ProxiedConnection(plugin, runtime, { prefix, session, listen, upstream, onRecord });
    const reported = conn.done.then(
      (bytes) => this.options.onSession?.({ session, indexPath: conn.writer.indexPath, bytes }),
      (e: unknown) => this.options.onError?.(e as Error),
    );
    this.live.set(conn, reported);
    await reported;
    this.live.delete(conn);
  }
}
