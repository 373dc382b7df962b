import { unlink } from "node:fs/promises";
import { type Server, type Socket, connect, createServer } from "node:net";

/**
 * A unix socket that relays every connection to another (the runtime's), so that the test
 * runtime knows how many plugins have connected and are still connected: what its events wait
 * for before they go out.
 */
export class SocketRelay {
  private readonly live = new Set<Socket>();
  private readonly watchers = new Set<() => void>();
  private server: Server | undefined;

  private constructor(
    readonly path: string,
    private readonly target: string,
  ) {}

  /** Listens on `path`, relaying to `target`. */
  static async listen(path: string, target: string): Promise<SocketRelay> {
    const relay = new SocketRelay(path, target);
    await unlink(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "ENOENT") throw e;
    });
    const server = createServer((s) => relay.accept(s));
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
    const runtime = connect(this.target);
    this.live.add(plugin);
    this.notify();
    plugin.pipe(runtime);
    runtime.pipe(plugin);
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

  /** Stops listening and ends every relayed connection. */
  async close(): Promise<void> {
    for (const s of this.live) s.destroy();
    await new Promise<void>((r) => (this.server === undefined ? r() : this.server.close(() => r())));
  }
}
