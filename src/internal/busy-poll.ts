/**
 * Adaptive busy polling. A process whose event loop sleeps in the kernel while it waits for a
 * peer's answer pays a wake-up when the answer comes: on a virtual machine whose idle cores
 * halt, that is a VM exit and a reschedule on each side, often more than the work itself.
 * After a write, a socket whose answers have lately come quickly keeps the event loop turning
 * (one `setImmediate` after another, each turn polling the sockets without blocking) for a
 * short window, so an answer within it is read without a sleep and a wake-up. A socket whose
 * answers come later than the window (a plugin between sparse events, a slow peer) does not
 * poll at all, so the CPU it costs is bounded by the window per message and is nothing on an
 * idle connection. One window serves the whole process: several sockets polling extend the
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

/** The process's event loop and clock. */
export const eventLoopClock: PollClock = { now: realNow, turn: (fn) => void setImmediate(fn) };

/** The process-wide polling window: the event loop keeps turning until `until`. */
export class PollWindow {
  private until = 0;
  private turning = false;
  /** Event-loop turns taken while polling, for tests and diagnostics. */
  turns = 0;

  constructor(private readonly clock: PollClock = eventLoopClock) {}

  /** Keeps the event loop turning until `micros` from now (a later deadline already set stays). */
  extend(micros: number): void {
    const until = this.clock.now() + micros / 1000;
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
 * After a write, the window is extended only when the previous answer (the first data after a
 * write) came within `micros` of that write; a socket starts out assuming it will.
 */
export class BusyPoll {
  private sentAt: number | undefined;
  private quick = true;

  constructor(
    private readonly micros: number,
    private readonly window: PollWindow = processPollWindow,
    private readonly clock: PollClock = eventLoopClock,
  ) {}

  /** Whether the last answer came within the window (so the next write polls). */
  get polling(): boolean {
    return this.micros > 0 && this.quick;
  }

  wrote(): void {
    if (this.micros === 0) return;
    if (this.sentAt === undefined) this.sentAt = this.clock.now();
    if (this.quick) this.window.extend(this.micros);
  }

  received(): void {
    if (this.sentAt === undefined) return;
    this.quick = (this.clock.now() - this.sentAt) * 1000 <= this.micros;
    this.sentAt = undefined;
  }
}

