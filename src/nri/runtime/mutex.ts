/** A FIFO async mutex: `run` waits for every earlier holder, then runs `fn` alone. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private held = 0;

  /** Whether someone holds or waits for the lock. */
  get locked(): boolean {
    return this.held > 0;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    this.held++;
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => void this.held--,
      () => void this.held--,
    );
    return result;
  }
}
