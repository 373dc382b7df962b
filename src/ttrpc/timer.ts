/** Node caps timer delays at 2^31 - 1 ms (about 24.8 days); longer ones are chained. */
const MAX_DELAY = 0x7fffffff;

/** A cancellable timer for any delay in milliseconds, however long. */
export class LongTimer {
  private handle: NodeJS.Timeout | undefined;

  constructor(
    private readonly fire: () => void,
    ms: number,
  ) {
    this.arm(Math.max(0, ms));
  }

  private arm(left: number): void {
    if (left > MAX_DELAY) this.handle = setTimeout(() => this.arm(left - MAX_DELAY), MAX_DELAY);
    else this.handle = setTimeout(this.fire, left);
  }

  clear(): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
  }
}
