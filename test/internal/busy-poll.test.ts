import { PassThrough } from "node:stream";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BusyPoll, type PollClock, PollWindow, QUICK_ANSWERS, RUN_PAUSE_MS, SUSTAINED_MS, checkBusyPollMicros, eventLoopClock, processPollWindow } from "../../src/internal/busy-poll.js";
import { Mux } from "../../src/mux/mux.js";
import { Client } from "../../src/ttrpc/client.js";
import { Server } from "../../src/ttrpc/server.js";
import { PLUGIN_BUSY_POLL_MICROS, RUNTIME_BUSY_POLL_MICROS } from "../../src/api/socket.js";
import { runs } from "../support/fc.js";
import { type HeldPollClock, holdPollClock } from "../support/poll-clock.js";
import { eventually } from "../support/wait.js";
import { trunkPair } from "../support/socket.js";

/** A clock the test moves, and an event loop whose turns the test runs one at a time. */
class FakeLoop implements PollClock {
  ms = 0;
  queued: (() => void)[] = [];
  now(): number {
    return this.ms;
  }
  turn(fn: () => void): void {
    this.queued.push(fn);
  }
  /** One turn of the loop: what was queued before it runs. */
  runTurn(): void {
    const q = this.queued;
    this.queued = [];
    for (const fn of q) fn();
  }
}

type Op = { kind: "advance"; micros: number } | { kind: "wrote"; conn: number } | { kind: "received"; conn: number } | { kind: "turn" };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("advance" as const), micros: fc.integer({ min: 0, max: 600 }) }),
  fc.record({ kind: fc.constant("wrote" as const), conn: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant("received" as const), conn: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant("turn" as const) }),
);

describe("busy polling", () => {
  it("keeps one chain of turns, ends it by the deadline of the last polled write, and polls only in a sustained run of messages on sockets answered within the window", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.array(op, { maxLength: 120 }), (micros, ops) => {
        const loop = new FakeLoop();
        // A run must last 1 ms with no pause over 0.5 ms: short enough for the generated steps to cross.
        const window = new PollWindow(loop, 1, 0.5);
        const polls = [0, 1, 2].map(() => new BusyPoll(micros, window, loop));
        // The model: per socket, when its unanswered write went out and how many answers in a row
        // came within the window; for the process, when the run of messages began and its last
        // message; the deadline the loop may turn until.
        const model = [0, 1, 2].map(() => ({ sentAt: undefined as number | undefined, quick: QUICK_ANSWERS }));
        let runStart = Number.NEGATIVE_INFINITY;
        let last = Number.NEGATIVE_INFINITY;
        const message = (): void => {
          if (loop.ms - last > 0.5) runStart = loop.ms;
          last = loop.ms;
        };
        let deadline = Number.NEGATIVE_INFINITY;
        for (const o of ops) {
          if (o.kind === "advance") loop.ms += o.micros / 1000;
          else if (o.kind === "turn") loop.runTurn();
          else if (o.kind === "wrote") {
            const m = model[o.conn]!;
            polls[o.conn]!.wrote();
            if (micros > 0) {
              message();
              m.sentAt ??= loop.ms;
              if (m.quick === QUICK_ANSWERS && loop.ms - runStart >= 1) deadline = Math.max(deadline, loop.ms + micros / 1000);
            }
          } else {
            const m = model[o.conn]!;
            polls[o.conn]!.received();
            if (micros > 0) {
              message();
              if (m.sentAt !== undefined) m.quick = (loop.ms - m.sentAt) * 1000 <= micros ? Math.min(m.quick + 1, QUICK_ANSWERS) : 0;
              m.sentAt = undefined;
            }
          }
          // One chain at most, however many sockets extend the window.
          expect(loop.queued.length).toBeLessThanOrEqual(1);
          expect(window.active).toBe(loop.queued.length === 1);
          polls.forEach((p, i) => expect(p.polling).toBe(micros > 0 && model[i]!.quick === QUICK_ANSWERS));
        }
        // Turning stops at the first turn at or past the deadline, and not before.
        loop.runTurn();
        expect(window.active).toBe(loop.ms < deadline);
        loop.ms = Math.max(loop.ms, deadline);
        loop.runTurn();
        expect(window.active).toBe(false);
        expect(loop.queued).toEqual([]);
      }),
      { numRuns: runs(1) },
    );
  });

  /** Writes and quick answers on `p`, `gapMs` apart, for `forMs`. */
  function exchange(loop: FakeLoop, p: BusyPoll, gapMs: number, forMs: number): void {
    for (const end = loop.ms + forMs; loop.ms < end; ) {
      p.wrote();
      loop.ms += gapMs;
      loop.runTurn();
      p.received();
      loop.ms += gapMs;
    }
  }

  it("messages back to back poll only once they have run 10 ms with no pause over 1 ms; events spaced apart never poll", () => {
    expect([SUSTAINED_MS, RUN_PAUSE_MS]).toEqual([10, 1]);
    const loop = new FakeLoop();
    const window = new PollWindow(loop);
    const p = new BusyPoll(250, window, loop);
    // A node's pace: a few messages, then 20 ms of nothing, again and again.
    for (let i = 0; i < 50; i++) {
      exchange(loop, p, 0.2, 3);
      loop.ms += 20;
    }
    expect(window.turns).toBe(0);
    // Back to back: the first 10 ms sleep between messages, then every write polls.
    exchange(loop, p, 0.1, 9.5);
    expect(window.turns).toBe(0);
    exchange(loop, p, 0.1, 1);
    expect(window.turns).toBeGreaterThan(0);
    // One pause of over 1 ms starts the count again.
    loop.ms += 1.5;
    loop.runTurn();
    const turns = window.turns;
    exchange(loop, p, 0.1, 9.5);
    expect(window.turns).toBe(turns);
  });

  it("a socket answered later than the window stops polling, and polls again after 4 answers in a row within it", () => {
    const loop = new FakeLoop();
    const window = new PollWindow(loop, 0);
    const p = new BusyPoll(250, window, loop);
    p.wrote();
    expect(window.active).toBe(true);
    loop.ms += 0.3;
    loop.runTurn();
    p.received();
    expect([window.active, p.polling]).toEqual([false, false]);
    for (let i = 0; i < QUICK_ANSWERS; i++) {
      expect(p.polling).toBe(false);
      p.wrote();
      expect(window.active).toBe(false);
      loop.ms += 0.2;
      p.received();
    }
    expect(p.polling).toBe(true);
    p.wrote();
    expect(window.active).toBe(true);
    expect(window.turns).toBe(0);
    loop.runTurn();
    expect(window.turns).toBe(1);
  });

  it("with a plugin's default window, requests that follow the runtime's turnaround keep the plugin polling, requests that come after other plugins' turns stop it", () => {
    expect([PLUGIN_BUSY_POLL_MICROS, RUNTIME_BUSY_POLL_MICROS]).toEqual([100, 250]);
    /** Whether a plugin still polls after answering requests that each come `gapMs` after its answer. */
    const pollsAfter = (micros: number, gapMs: number): boolean => {
      const loop = new FakeLoop();
      const p = new BusyPoll(micros, new PollWindow(loop, 0), loop);
      for (let i = 0; i < 2 * QUICK_ANSWERS; i++) {
        p.wrote();
        loop.ms += gapMs;
        loop.runTurn();
        p.received();
      }
      return p.polling;
    };
    // One plugin: the next request follows the runtime's own work (under 50 µs).
    expect(pollsAfter(PLUGIN_BUSY_POLL_MICROS, 0.045)).toBe(true);
    // One of three: it follows two other plugins' round trips (115-170 µs after the answer, more
    // on a slower machine).
    expect(pollsAfter(PLUGIN_BUSY_POLL_MICROS, 0.36)).toBe(false);
    expect(pollsAfter(PLUGIN_BUSY_POLL_MICROS, 0.15)).toBe(false);
    // The runtime's window would have kept that plugin polling through the others' turns.
    expect(pollsAfter(RUNTIME_BUSY_POLL_MICROS, 0.15)).toBe(true);
  });

  it("0 turns it off; other values are refused with the owner named", () => {
    const loop = new FakeLoop();
    const window = new PollWindow(loop);
    const p = new BusyPoll(0, window, loop);
    p.wrote();
    expect([window.active, p.polling]).toEqual([false, false]);
    expect(checkBusyPollMicros("mux", undefined, 0)).toBe(0);
    expect(checkBusyPollMicros("nri", 10_000, 250)).toBe(10_000);
    for (const bad of [-1, 1.5, 10_001, Number.NaN]) {
      expect(() => checkBusyPollMicros("nri", bad, 250)).toThrow(`nri: busyPollMicros ${bad} is not an integer from 0 to 10000`);
    }
    expect(() => new Mux(new PassThrough(), { busyPollMicros: -5 })).toThrow("mux: busyPollMicros -5 is not an integer from 0 to 10000");
    expect(() => new Client(new PassThrough(), { busyPollMicros: 0.5 })).toThrow("ttrpc: busyPollMicros 0.5 is not an integer from 0 to 10000");
    expect(() => new Server({ busyPollMicros: 10_001 })).toThrow("ttrpc: busyPollMicros 10001 is not an integer from 0 to 10000");
  });
});


describe("busy polling under fake timers", () => {
  it("a window opened while a test fakes the timers turns on the real event loop and ends by the real clock", async () => {
    vi.useFakeTimers({ toFake: ["setImmediate", "setTimeout", "performance", "hrtime", "Date"] });
    const window = new PollWindow();
    try {
      window.extend(2000);
      expect(window.active).toBe(true);
      // Its turn went to the real event loop: nothing waits on the fake clock, which never runs.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    await eventually(() => !window.active, "the window to end");
  });
});

describe("busy polling over a socket", () => {
  // The poller's clock is the test's (time passes only when the test says), so which write polls
  // does not depend on how fast this machine answers; the sockets, the mux and ttrpc are real.
  let clock: HeldPollClock;
  beforeEach(() => {
    clock = holdPollClock();
  });
  afterEach(() => clock.restore());

  /** Poller time between two calls back to back: well under the 1 ms pause that ends a run. */
  const STEP_MS = 0.125;

  /**
   * An echo server answering `delayMs` of poller time after the request and a client polling
   * for `busyPollMicros`: over a mux pair (the mux polls), or over a bare socket (the ttrpc
   * client polls).
   */
  async function pair(busyPollMicros: number, delayMs: number, over: "mux" | "socket" = "mux"): Promise<{ call: () => Promise<void>; close: () => void }> {
    const [a, b, done] = await trunkPair();
    const echo = new Server().register("s.Echo", {
      Echo: {
        kind: "unary" as const,
        handler: (r: Uint8Array) => {
          clock.advance(delayMs);
          return r;
        },
      },
    });
    let c: Client;
    let close: () => void;
    if (over === "mux") {
      const server = new Mux(a);
      const client = new Mux(b, { busyPollMicros });
      echo.serve(server.open(1));
      c = new Client(client.open(1));
      close = () => {
        client.close();
        server.close();
      };
    } else {
      echo.serve(a);
      c = new Client(b, { busyPollMicros });
      close = () => {
        c.close();
        a.destroy();
      };
    }
    return {
      call: async () => void (await c.call("s.Echo", "Echo", Uint8Array.of(1))),
      close: () => {
        close();
        done();
      },
    };
  }

  /** Calls `STEP_MS` apart until one polls (the event loop turned while it waited): how many it took, or undefined after `max`. */
  async function callsUntilPolled(p: { call: () => Promise<void> }, max: number): Promise<number | undefined> {
    const before = processPollWindow.turns;
    for (let n = 1; n <= max; n++) {
      await p.call();
      if (processPollWindow.turns > before) return n;
      clock.advance(STEP_MS);
    }
    return undefined;
  }

  it.each(["mux", "socket"] as const)("over a %s, calls back to back turn the event loop once they have run the sustained time, and turning stops once the window has passed", async (over) => {
    const p = await pair(5000, 0, over);
    await eventually(() => !processPollWindow.active, "no window open before the test");
    // The run starts with the first call; the first write SUSTAINED_MS after it polls.
    expect(await callsUntilPolled(p, 1000)).toBe(SUSTAINED_MS / STEP_MS + 1);
    // The window stays open while the clock stands still, and closes once it has passed.
    const turns = processPollWindow.turns;
    await new Promise((r) => setImmediate(r));
    expect([processPollWindow.active, processPollWindow.turns > turns]).toEqual([true, true]);
    clock.advance(5000 / 1000);
    await eventually(() => !processPollWindow.active, "the window to end");
    p.close();
  });

  it("a peer slower than the window is not polled for; with 0 nothing polls", async () => {
    const slow = await pair(2000, 3);
    await eventually(() => !processPollWindow.active, "no window open before the test");
    const before = processPollWindow.turns;
    for (let i = 0; i < 4; i++) await slow.call();
    expect(processPollWindow.turns).toBe(before);
    slow.close();
    const off = await pair(0, 0);
    expect(await callsUntilPolled(off, 4 * (SUSTAINED_MS / STEP_MS))).toBeUndefined();
    expect(processPollWindow.active).toBe(false);
    off.close();
  });
});

describe("the held poll clock tests use", () => {
  it("starts a new run of messages even right after a held clock that ran ahead of the real one", async () => {
    const first = holdPollClock();
    // The window's turns never run: only the run of messages matters here.
    const window = new PollWindow({ now: () => eventLoopClock.now(), turn: () => {} });
    const poll = new BusyPoll(2000, window);
    // A run of messages 0.5 ms apart for a second of held time, far ahead of the real clock.
    for (let t = 0; t <= 1000; t += 0.5) {
      poll.wrote();
      poll.received();
      first.advance(0.5);
    }
    expect(window.sustained(eventLoopClock.now())).toBe(true);
    first.restore();
    // Real time passes, more than the sustained time, still well behind where the held clock stopped.
    await new Promise((r) => setTimeout(r, 2 * SUSTAINED_MS));
    const second = holdPollClock();
    try {
      poll.wrote();
      expect(window.sustained(eventLoopClock.now())).toBe(false);
    } finally {
      second.restore();
    }
  });
});
