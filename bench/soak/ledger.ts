/**
 * Accounting of the events a soak issues: how many were issued, settled with a result or with
 * an error, and a watchdog that names the first event that has not settled in time.
 *
 * The runtime delivers one event at a time, first come first served, so an event's own time
 * starts when every event issued before it has settled: the oldest pending event is the one
 * being delivered. Its turn began at the later of its issue and the last settlement; the
 * watchdog measures from there, so a queue of events behind a slow one is not mistaken for a
 * hang.
 */

interface Pending {
  readonly what: string;
  readonly issuedAt: number;
}

/** The counts of a ledger at one moment. */
export interface LedgerCounts {
  readonly issued: number;
  readonly ok: number;
  readonly error: number;
  readonly pending: number;
}

/** How many distinct error messages are counted; the rest are counted as "other". */
const MAX_ERROR_KINDS = 40;

export class EventLedger {
  private seq = 0;
  private okCount = 0;
  private errorCount = 0;
  private lastSettleAt: number;
  private readonly pendingEvents = new Map<number, Pending>();
  private readonly drained = new Set<() => void>();
  /** Error messages by count (container and pod names replaced by `*`). */
  readonly errors = new Map<string, number>();
  /** Longest time from issue to settlement, in ms. */
  maxLatencyMs = 0;
  /** Longest time from an event's turn to its settlement, in ms. */
  maxTurnMs = 0;

  /**
   * `boundMs`: how long an event may take from its turn to settle (the runtime's worst case
   * plus slack); `now` is the clock in ms.
   */
  constructor(
    readonly boundMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastSettleAt = now();
  }

  /**
   * Issues one event: `what` names it in failures (`createContainer pod-3/ctr-1`). Resolves
   * with its result, or with `undefined` when it failed; never rejects.
   */
  async track<T>(what: string, call: () => Promise<T>): Promise<T | undefined> {
    const id = this.seq++;
    const issuedAt = this.now();
    this.pendingEvents.set(id, { what, issuedAt });
    try {
      const result = await call();
      this.okCount++;
      return result;
    } catch (e) {
      this.errorCount++;
      this.countError((e as Error).message);
      return undefined;
    } finally {
      const at = this.now();
      const turn = Math.max(issuedAt, this.lastSettleAt);
      this.maxLatencyMs = Math.max(this.maxLatencyMs, at - issuedAt);
      this.maxTurnMs = Math.max(this.maxTurnMs, at - turn);
      this.lastSettleAt = at;
      this.pendingEvents.delete(id);
      if (this.pendingEvents.size === 0) for (const f of [...this.drained]) f();
    }
  }

  /** The counts now. */
  counts(): LedgerCounts {
    return { issued: this.seq, ok: this.okCount, error: this.errorCount, pending: this.pendingEvents.size };
  }

  /** A failure text when the oldest pending event is past its bound, else undefined. */
  overdue(): string | undefined {
    const first = this.pendingEvents.values().next();
    if (first.done === true) return undefined;
    const { what, issuedAt } = first.value;
    const turn = Math.max(issuedAt, this.lastSettleAt);
    const waited = this.now() - turn;
    if (waited <= this.boundMs) return undefined;
    return `soak: ${what} has not settled ${Math.round(waited)} ms after its turn (bound ${this.boundMs} ms; ${this.pendingEvents.size} events pending)`;
  }

  /** Resolves once no event is pending. */
  idle(): Promise<void> {
    if (this.pendingEvents.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.drained.delete(done);
        resolve();
      };
      this.drained.add(done);
    });
  }

  private countError(message: string): void {
    const key = message.replace(/pod-\d+(-ctr-\d+)?/g, "*");
    if (this.errors.has(key) || this.errors.size < MAX_ERROR_KINDS) this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
    else this.errors.set("other", (this.errors.get("other") ?? 0) + 1);
  }
}
