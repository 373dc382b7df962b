import type { Socket } from "node:net";
import { CaptureWriter } from "./capture-file.js";
import { type Direction, SessionDecoder, type SessionRecord } from "./session-decoder.js";

/** What a proxied connection reports. */
export interface ProxiedConnectionOptions {
  /** The capture's path prefix and session name. */
  readonly prefix: string;
  readonly session: string;
  /** Written into the capture's index. */
  readonly listen: string;
  readonly upstream: string;
  /** Each decoded record as its bytes pass; decoding is off without it. */
  readonly onRecord: ((session: string, record: SessionRecord) => void) | undefined;
}

/**
 * One plugin connection forwarded to the runtime and back, every read recorded with its time and
 * optionally decoded. `done` resolves with the capture's byte counts once both sockets have
 * closed and the capture is written, or rejects with why it could not be written.
 */
export class ProxiedConnection {
  readonly done: Promise<Record<Direction, number>>;
  readonly writer: CaptureWriter;
  private readonly decoder: SessionDecoder | undefined;
  private readonly ended = new Set<Direction>();
  private closedCount = 0;
  private settle!: (sizes: Promise<Record<Direction, number>>) => void;

  constructor(
    private readonly plugin: Socket,
    private readonly runtime: Socket,
    private readonly options: ProxiedConnectionOptions,
  ) {
    this.writer = new CaptureWriter({ prefix: options.prefix, listen: options.listen, upstream: options.upstream });
    this.decoder = options.onRecord === undefined ? undefined : new SessionDecoder();
    this.done = new Promise<Promise<Record<Direction, number>>>((r) => (this.settle = r)).then((p) => p);
    plugin.on("close", this.onClose);
    runtime.on("close", this.onClose);
    this.forward(plugin, runtime, "p2r");
    this.forward(runtime, plugin, "r2p");
    plugin.resume();
  }

  /** Cuts both sockets; `done` follows once the capture is written. */
  close(): void {
    this.plugin.destroy();
    this.runtime.destroy();
  }

  private emit(records: SessionRecord[]): void {
    for (const r of records) this.options.onRecord!(this.options.session, r);
  }

  private endDir(dir: Direction): void {
    if (this.ended.has(dir)) return;
    this.ended.add(dir);
    const t = this.writer.now();
    this.writer.closeDir(dir, t);
    if (this.decoder !== undefined) this.emit(this.decoder.end(dir, t, this.writer.timeOf(t)));
  }

  private forward(from: Socket, to: Socket, dir: Direction): void {
    from.on("data", (chunk: Buffer) => {
      const t = this.writer.now();
      this.writer.chunk(dir, chunk, t);
      if (this.decoder !== undefined) this.emit(this.decoder.push(dir, chunk, t, this.writer.timeOf(t)));
      if (!to.write(chunk)) {
        from.pause();
        to.once("drain", () => from.resume());
      }
    });
    from.on("end", () => {
      this.endDir(dir);
      to.end();
    });
    // A reset on one side is passed on as a reset of the other.
    from.on("error", () => to.destroy());
  }

  private readonly onClose = (): void => {
    if (++this.closedCount < 2) return;
    this.endDir("p2r");
    this.endDir("r2p");
    this.settle(this.writer.close().then(() => this.writer.sizes()));
  };
}
