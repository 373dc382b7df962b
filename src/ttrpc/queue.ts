/**
 * An inbound message queue read as an AsyncIterable. It tells its owner when it holds more than
 * `highWater` messages so the owner can stop reading the socket (ttrpc has no flow control of
 * its own; pausing the connection is what the reference does by blocking its reader).
 */
export class MessageQueue implements AsyncIterable<Uint8Array> {
  private readonly items: Uint8Array[] = [];
  private head = 0;
  private ended = false;
  private error: Error | undefined;
  private waiter: ((r: IteratorResult<Uint8Array>) => void) | undefined;
  private rejecter: ((e: Error) => void) | undefined;
  private congested = false;
  private iterating = false;

  constructor(
    private readonly highWater: number,
    private readonly onCongestion: (congested: boolean) => void,
    private readonly onReturn: () => void,
  ) {}

  /** Messages waiting to be read. */
  get size(): number {
    return this.items.length - this.head;
  }

  get closed(): boolean {
    return this.ended || this.error !== undefined;
  }

  push(msg: Uint8Array): void {
    if (this.closed) return;
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = this.rejecter = undefined;
      w({ value: msg, done: false });
      return;
    }
    this.items.push(msg);
    if (!this.congested && this.size > this.highWater) {
      this.congested = true;
      this.onCongestion(true);
    }
  }

  /** No more messages: readers finish after draining what is queued. */
  end(): void {
    if (this.closed) return;
    this.ended = true;
    const w = this.waiter;
    if (w !== undefined && this.size === 0) {
      this.waiter = this.rejecter = undefined;
      w({ value: undefined, done: true });
    }
  }

  /** Ends the queue with an error; queued messages are dropped. */
  fail(err: Error): void {
    if (this.closed) return;
    this.error = err;
    this.items.length = 0;
    this.head = 0;
    this.uncongest();
    const r = this.rejecter;
    if (r !== undefined) {
      this.waiter = this.rejecter = undefined;
      r(err);
    }
  }

  private uncongest(): void {
    if (this.congested) {
      this.congested = false;
      this.onCongestion(false);
    }
  }

  private shift(): Uint8Array | undefined {
    if (this.head >= this.items.length) return undefined;
    const v = this.items[this.head]!;
    this.items[this.head++] = undefined as unknown as Uint8Array;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    }
    if (this.congested && this.size <= this.highWater >> 1) this.uncongest();
    return v;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    const v = this.shift();
    if (v !== undefined) return Promise.resolve({ value: v, done: false });
    if (this.error !== undefined) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter !== undefined) return Promise.reject(new Error("ttrpc: concurrent reads of one stream"));
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.rejecter = reject;
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    if (this.iterating) throw new Error("ttrpc: a stream can be iterated only once");
    this.iterating = true;
    return {
      next: () => this.next(),
      return: () => {
        this.stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  /** The reader is gone: drop what is queued and tell the owner. */
  stop(): void {
    if (!this.closed) {
      this.ended = true;
      this.items.length = 0;
      this.head = 0;
      this.uncongest();
    }
    this.onReturn();
  }
}
