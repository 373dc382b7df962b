/** Default cap on the bytes all connections of a process hold for partially received frames: 64 MiB. */
export const DEFAULT_PARTIAL_FRAME_LIMIT = 64 << 20;

/** Validates a byte-limit option: an integer from 0 to 2^53 - 1. */
function checkLimit(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`ttrpc: partial-frame limit ${value} is not an integer >= 0`);
  }
  return value;
}

/**
 * The bytes held for partially received frames, counted across every connection that shares
 * it, with a cap. A frame split across socket reads has to be buffered until it completes, and
 * each connection's own limit (4 MiB) is no bound on a process serving many connections: a
 * reservation the cap refuses closes the connection that asked for it.
 */
export class FrameBudget {
  private held = 0;
  private max: number;

  constructor(limit: number = DEFAULT_PARTIAL_FRAME_LIMIT) {
    this.max = checkLimit(limit);
  }

  /** The cap in bytes; lowering it refuses new reservations, never takes back granted ones. */
  get limit(): number {
    return this.max;
  }

  set limit(value: number) {
    this.max = checkLimit(value);
  }

  /** Bytes reserved now. */
  get used(): number {
    return this.held;
  }

  /** Takes `n` bytes; false, taking nothing, when that would pass the cap. */
  reserve(n: number): boolean {
    if (this.held + n > this.max) return false;
    this.held += n;
    return true;
  }

  /** Gives back `n` bytes taken by reserve(). */
  release(n: number): void {
    this.held = Math.max(0, this.held - n);
  }
}

/** The budget every ttrpc connection of the process shares unless given its own. */
export const processFrameBudget: FrameBudget = new FrameBudget();
