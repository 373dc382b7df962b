/**
 * Call deadlines without a Node timer per call. Arming and clearing a timer for every call costs
 * more than the rest of a small call's bookkeeping (each is a timer list and priority queue
 * update), and almost every call ends long before its deadline. Calls with the same timeout are
 * kept in arrival order, which is deadline order, in one queue per timeout served by one timer:
 * a call is an entry pushed on start and marked done on its end. The timer wakes at the first
 * deadline, fires what is due and sleeps until the next live one; while no call of its timeout
 * is pending it keeps no process alive (it is unref'd), and a queue left idle for a whole
 * period is dropped.
 */
import { performance } from "node:perf_hooks";

/** Node caps timer delays at 2^31 - 1 ms (about 24.8 days); longer waits are taken in steps. */
const MAX_DELAY = 0x7fffffff;

/** A timer as the queues use it: Node's Timeout has these. */
export interface QueueTimer {
  ref(): unknown;
  unref(): unknown;
}

/** The clock and timers the queues run on; tests give their own. */
export interface DeadlineClock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Calls `fn` once, after `ms` milliseconds. */
  setTimer(fn: () => void, ms: number): QueueTimer;
}

const nodeClock: DeadlineClock = { now: () => performance.now(), setTimer: (fn, ms) => setTimeout(fn, ms) };

/** A pending deadline; `clear()` once the call has ended. */
export interface Deadline {
  clear(): void;
}

class Entry implements Deadline {
  constructor(
    readonly queue: Queue,
    readonly at: number,
    public fire: (() => void) | undefined,
  ) {}

  clear(): void {
    if (this.fire === undefined) return;
    this.fire = undefined;
    this.queue.ended(this);
  }
}

/** The calls of one timeout, in deadline order, and the timer that serves them. */
class Queue {
  private entries: Entry[] = [];
  private head = 0;
  private live = 0;
  private timer: QueueTimer | undefined;
  /** The deadline the timer was set for. */
  private armedFor = 0;
  private waking = false;

  constructor(
    private readonly owner: DeadlineQueues,
    readonly ms: number,
  ) {}

  add(fire: () => void): Entry {
    const e = new Entry(this, this.owner.clock.now() + this.ms, fire);
    this.entries.push(e);
    if (this.live++ === 0) this.timer?.ref();
    // A timer set for an earlier deadline wakes first and moves on to this one.
    if (this.timer === undefined && !this.waking) this.arm(e.at);
    return e;
  }

  ended(e: Entry): void {
    this.live--;
    if (e === this.entries[this.head]) this.skipEnded();
    if (this.live === 0) this.timer?.unref();
  }

  private skipEnded(): void {
    const es = this.entries;
    while (this.head < es.length && es[this.head]!.fire === undefined) this.head++;
    if (this.head === es.length) {
      es.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > es.length) {
      this.entries = es.slice(this.head);
      this.head = 0;
    }
  }

  private arm(at: number): void {
    const now = this.owner.clock.now();
    const delay = Math.min(MAX_DELAY, Math.max(0, at - now));
    this.armedFor = Math.min(at, now + delay);
    this.timer = this.owner.clock.setTimer(this.wake, Math.ceil(delay));
    if (this.live === 0) this.timer.unref();
  }

  private readonly wake = (): void => {
    this.timer = undefined;
    // The timer's own deadline has come even if the clock reads a little earlier.
    const due = Math.max(this.owner.clock.now(), this.armedFor);
    this.waking = true;
    try {
      // A call that fires may start another (pushed behind, with a later deadline).
      while (this.head < this.entries.length) {
        const e = this.entries[this.head]!;
        if (e.fire !== undefined && e.at > due) break;
        this.head++;
        const fire = e.fire;
        if (fire !== undefined) {
          e.fire = undefined;
          this.live--;
          fire();
        }
      }
    } finally {
      this.waking = false;
    }
    this.skipEnded();
    const next = this.entries[this.head];
    if (next !== undefined) this.arm(next.at);
    else this.owner.drop(this);
  };
}

/** Deadlines by timeout: one Queue per distinct timeout in milliseconds. */
export class DeadlineQueues {
  private readonly queues = new Map<number, Queue>();

  constructor(readonly clock: DeadlineClock = nodeClock) {}

  /** Calls `fire` once `ms` milliseconds have passed, unless cleared before. */
  start(fire: () => void, ms: number): Deadline {
    const key = Math.max(0, ms);
    let q = this.queues.get(key);
    if (q === undefined) {
      q = new Queue(this, key);
      this.queues.set(key, q);
    }
    return q.add(fire);
  }

  /** Queues currently kept (for tests). */
  get size(): number {
    return this.queues.size;
  }

  /** @internal An idle queue whose timer has woken to nothing. */
  drop(q: Queue): void {
    if (this.queues.get(q.ms) === q) this.queues.delete(q.ms);
  }
}

/** The process's deadlines, shared by every ttrpc client and server. */
export const processDeadlines = new DeadlineQueues();
