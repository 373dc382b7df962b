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
 * starts just past the real clock, so whatever the poller saw before ends its run of messages.
 */
export function holdPollClock(): HeldPollClock {
  let now = performance.now() + 2 * RUN_PAUSE_MS;
  const spy = vi.spyOn(eventLoopClock, "now").mockImplementation(() => now);
  return {
    advance: (ms) => void (now += ms),
    restore: () => spy.mockRestore(),
  };
}
