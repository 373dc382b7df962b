import { unlink } from "node:fs/promises";
import { type Server, type Socket, connect, createServer } from "node:net";
import { basename } from "node:path";
import { ProxiedConnection } from "../capture/proxied-connection.js";

/**
 * A unix socket that relays every connection to another (the runtime's), so that the test
 * runtime knows how many plugins have connected and are still connected: what its events wait
 * for before they go out. With a capture prefix it records each connection as `record` does.
 */
export class SocketRelay {
  private readonly live = new Set<Socket>();
  private readonly watchers = new Set<() => void>();
  /** Each recorded connection's capture, written once the connection has ended. */
  private readonly recordings: Promise<string>[] = [];
  private server: Server | undefined;

  private constructor(
    readonly path: string,
    private readonly target: string,
    private readonly record: string | undefined,
  ) {}

  /** Listens on `path`, relaying to `target`; with `record`, every connection is captured (PREFIX, PREFIX-2, ...). */
  static async listen(path: string, target: string, record?: string): Promise<SocketRelay> {
    const relay = new SocketRelay(path, target, record);
    await unlink(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "ENOENT") throw e;
    });
    // Half-closes travel through, as through the recording proxy.
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (s) => relay.accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    relay.server = server;
    return relay;
  }

  /** Connections open now. */
  get connections(): number {
    return this.live.size;
  }

  /** Settles at the next connection or disconnection. */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      const w = (): void => {
        this.watchers.delete(w);
        resolve();
      };
      this.watchers.add(w);
    });
  }

  private notify(): void {
    for (const w of [...this.watchers]) w();
  }

  private accept(plugin: Socket): void {
    const runtime = connect({ path: this.target, allowHalfOpen: true });
    this.live.add(plugin);
    this.notify();
    if (this.record !== undefined) {
      const n = this.recordings.length + 1;
      const prefix = n === 1 ? this.record : `${this.record}-${n}`;
      const conn = new ProxiedConnection(plugin, runtime, { prefix, session: basename(prefix), listen: this.path, upstream: this.target, onRecord: undefined });
      this.recordings.push(conn.done.then(() => conn.writer.indexPath));
    } else {
      plugin.pipe(runtime);
      runtime.pipe(plugin);
      plugin.resume();
    }
    const end = (): void => {
      plugin.destroy();
      runtime.destroy();
      if (this.live.delete(plugin)) this.notify();
    };
    for (const s of [plugin, runtime]) {
      s.once("close", end);
      s.once("error", end);
    }
  }

  /**
   * Stops listening and ends every relayed connection; resolves with the index files of the
   * captures, once written (none without a capture prefix).
   */
  async close(): Promise<string[]> {
    for (const s of this.live) s.destroy();
    await new Promise<void>((r) => (this.server === undefined ? r() : this.server.close(() => r())));
    return Promise.all(this.recordings);
  }
}
