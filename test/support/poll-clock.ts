import { performance } from "node:perf_hooks";
import { vi } from "vitest";
import { RUN_PAUSE_MS, eventLoopClock } from "../../src/internal/busy-poll.js";

/** The busy-polling clock of the process while a test holds it: time passes only when the test says. */
export interface HeldPollClock {
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
  /** Gives the poller its real clock back. */
  restore(): void;
}

/**
 * Replaces the clock every socket's busy polling reads (`eventLoopClock.now`), so whether a
 * write polls depends on the steps the test takes and not on how fast this machine answers. It
 * starts more than a run's pause past anything the poller has seen (the real clock, and where an
 * earlier held clock stopped, which may be ahead of it), so whatever came before ends its run of
 * messages. It starts at a whole millisecond, so that steps of binary fractions (0.125 ms) add
 * up exactly: from the real clock's fraction, a sum crossing a power of two rounds, and 80 steps
 * of 0.125 could fall short of 10 ms.
 */
export function holdPollClock(): HeldPollClock {
  let now = Math.ceil(Math.max(performance.now(), furthestHeld)) + 2 * RUN_PAUSE_MS;
  const spy = vi.spyOn(eventLoopClock, "now").mockImplementation(() => now);
  return {
    advance: (ms) => {
      now += ms;
      furthestHeld = Math.max(furthestHeld, now);
    },
    restore: () => spy.mockRestore(),
  };
}

/** The latest time a held clock showed in this module's life (a test may move it past the real clock). */
let furthestHeld = Number.NEGATIVE_INFINITY;
