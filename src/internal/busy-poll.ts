/**
 * Adaptive busy polling. A process whose event loop sleeps in the kernel while it waits for a
 * peer's answer pays a wake-up when the answer comes: on a virtual machine whose idle cores
 * halt, that is a VM exit and a reschedule on each side, often more than the work itself.
 * After a write, the event loop keeps turning (one `setImmediate` after another, each turn
 * polling the sockets without blocking) for a short window, so an answer within it is read
 * without a sleep and a wake-up; but only where that pays:
 *
 * - only once the process has been exchanging messages, none more than `RUN_PAUSE_MS` after the
 *   one before, for `SUSTAINED_MS`: messages back to back, where both peers are awake.
 *   A peer woken from a sleep can be put on the CPU of the process that woke it, which the
 *   kernel expects to sleep next; polling there keeps the woken peer waiting, so events spaced
 *   apart (a node's pace: one container's events are milliseconds apart) never poll;
 * - only on a socket whose last few answers came within the window (a peer that is slow, or that
 *   waits its turn behind other plugins, is not polled for).
 *
 * So the CPU it costs is bounded by the window per message and is nothing on an idle or a
 * sparse connection. One window serves the whole process: several sockets polling extend the
 * same deadline.
 */
import { performance } from "node:perf_hooks";
import { setImmediate } from "node:timers";

/** What the poller needs from its surroundings; tests give their own. */
export interface PollClock {
  /** Milliseconds, monotonic, with sub-millisecond resolution. */
  now(): number;
  /** Runs `fn` after the event loop's next poll for I/O, which does not block while one is queued. */
  turn(fn: () => void): void;
}

// Node's own, not the globals: fake timers a test installs replace the globals, and a window
// must still end (and turn) by the real clock. The clock is taken when the module loads.
const realNow = performance.now.bind(performance);

/** The process's event loop and clock (tests replace its `now` to run windows on a clock they move). */
export const eventLoopClock: PollClock = { now: realNow, turn: (fn) => void setImmediate(fn) };

/** How long messages must have followed each other without a pause before a write polls: 10 ms. */
export const SUSTAINED_MS = 10;

/** How many answers in a row must have come within the window before a socket polls again: 4. */
export const QUICK_ANSWERS = 4;

/** The longest time between two messages of one run: 1 ms. */
export const RUN_PAUSE_MS = 1;

/**
 * The process-wide polling window: the event loop keeps turning until `until`. It also keeps the
 * process's run of messages: when the current run of messages read and written, none more than
 * the pause after the one before, began.
 */
export class PollWindow {
  private until = 0;
  private turning = false;
  private lastMessage = Number.NEGATIVE_INFINITY;
  private runStart = Number.NEGATIVE_INFINITY;
  /** Event-loop turns taken while polling, for tests and diagnostics. */
  turns = 0;

  constructor(
    private readonly clock: PollClock = eventLoopClock,
    /** How long a run must have lasted before `sustained`, in ms. */
    private readonly sustainedMs: number = SUSTAINED_MS,
    /** The longest time between two messages of one run, in ms. */
    private readonly pauseMs: number = RUN_PAUSE_MS,
  ) {}

  /** Records a message read or written at `now`; one more than the run's pause after the last starts a new run. */
  message(now: number): void {
    if (now - this.lastMessage > this.pauseMs) this.runStart = now;
    this.lastMessage = now;
  }

  /** Whether the current run of messages has lasted the sustained time at `now`. */
  sustained(now: number): boolean {
    return now - this.runStart >= this.sustainedMs;
  }

  /** Keeps the event loop turning until `micros` from now (a later deadline already set stays). */
  extend(micros: number, now: number = this.clock.now()): void {
    const until = now + micros / 1000;
    if (until > this.until) this.until = until;
    if (!this.turning) {
      this.turning = true;
      this.clock.turn(this.tick);
    }
  }

  /** Whether the event loop is being kept turning. */
  get active(): boolean {
    return this.turning;
  }

  private readonly tick = (): void => {
    if (this.clock.now() < this.until) {
      this.turns++;
      this.clock.turn(this.tick);
    } else this.turning = false;
  };
}

/** The window every socket of the process extends. */
export const processPollWindow = new PollWindow();

/** Largest busyPollMicros accepted: 10 ms. */
export const MAX_BUSY_POLL_MICROS = 10_000;

/** Validates a busyPollMicros option (`owner` names it in the error). */
export function checkBusyPollMicros(owner: string, micros: number | undefined, fallback: number): number {
  if (micros === undefined) return fallback;
  if (!Number.isSafeInteger(micros) || micros < 0 || micros > MAX_BUSY_POLL_MICROS) {
    throw new RangeError(`${owner}: busyPollMicros ${micros} is not an integer from 0 to ${MAX_BUSY_POLL_MICROS}`);
  }
  return micros;
}

/**
 * One socket's polling decision. `wrote()` after each write; `received()` when data comes in.
 * After a write, the window is extended only when the process's messages have run without a
 * pause for the sustained time (see `PollWindow`), and the last `QUICK_ANSWERS` answers on this
 * socket (an answer: the first data after a write) each came within `micros` of its write; a
 * socket starts out assuming they did.
 */
export class BusyPoll {
  private sentAt: number | undefined;
  /** Answers in a row that came within the window, up to QUICK_ANSWERS; starts out full. */
  private quickAnswers = QUICK_ANSWERS;

  constructor(
    private readonly micros: number,
    private readonly window: PollWindow = processPollWindow,
    private readonly clock: PollClock = eventLoopClock,
  ) {}

  /** Whether the last QUICK_ANSWERS answers came within the window (so the next write may poll). */
  get polling(): boolean {
    return this.micros > 0 && this.quickAnswers === QUICK_ANSWERS;
  }

  wrote(): void {
    if (this.micros === 0) return;
    const now = this.clock.now();
    this.window.message(now);
    if (this.sentAt === undefined) this.sentAt = now;
    if (this.quickAnswers === QUICK_ANSWERS && this.window.sustained(now)) this.window.extend(this.micros, now);
  }

  received(): void {
    if (this.micros === 0) return;
    const now = this.clock.now();
    this.window.message(now);
    if (this.sentAt === undefined) return;
    this.quickAnswers = (now - this.sentAt) * 1000 <= this.micros ? Math.min(this.quickAnswers + 1, QUICK_ANSWERS) : 0;
    this.sentAt = undefined;
  }
}
