import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { BusyPoll, type PollClock, PollWindow, checkBusyPollMicros, processPollWindow } from "../../src/internal/busy-poll.js";
import { Mux } from "../../src/mux/mux.js";
import { Client } from "../../src/ttrpc/client.js";
import { Server } from "../../src/ttrpc/server.js";
import { runs } from "../support/fc.js";
import { eventually, sleep } from "../support/wait.js";
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
  it("keeps one chain of turns, ends it by the deadline of the last quick write, and polls only for sockets answered within the window", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.array(op, { maxLength: 80 }), (micros, ops) => {
        const loop = new FakeLoop();
        const window = new PollWindow(loop);
        const polls = [0, 1, 2].map(() => new BusyPoll(micros, window, loop));
        // The model: per socket, when its unanswered write went out and whether its last answer
        // came within the window; the deadline the loop may turn until.
        const model = [0, 1, 2].map(() => ({ sentAt: undefined as number | undefined, quick: true }));
        let deadline = -Infinity;
        for (const o of ops) {
          if (o.kind === "advance") loop.ms += o.micros / 1000;
          else if (o.kind === "turn") loop.runTurn();
          else if (o.kind === "wrote") {
            const m = model[o.conn]!;
            polls[o.conn]!.wrote();
            if (micros > 0) {
              m.sentAt ??= loop.ms;
              if (m.quick) deadline = Math.max(deadline, loop.ms + micros / 1000);
            }
          } else {
            const m = model[o.conn]!;
            polls[o.conn]!.received();
            if (m.sentAt !== undefined) m.quick = (loop.ms - m.sentAt) * 1000 <= micros;
            m.sentAt = undefined;
          }
          // One chain at most, however many sockets extend the window.
          expect(loop.queued.length).toBeLessThanOrEqual(1);
          expect(window.active).toBe(loop.queued.length === 1);
          polls.forEach((p, i) => expect(p.polling).toBe(micros > 0 && model[i]!.quick));
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

  it("a socket answered later than the window stops polling, and polls again once an answer comes within it", () => {
    const loop = new FakeLoop();
    const window = new PollWindow(loop);
    const p = new BusyPoll(250, window, loop);
    p.wrote();
    expect(window.active).toBe(true);
    loop.ms += 0.3;
    loop.runTurn();
    p.received();
    expect([window.active, p.polling]).toEqual([false, false]);
    p.wrote();
    expect(window.active).toBe(false);
    loop.ms += 0.2;
    p.received();
    expect(p.polling).toBe(true);
    p.wrote();
    expect(window.active).toBe(true);
    expect(window.turns).toBe(0);
    loop.runTurn();
    expect(window.turns).toBe(1);
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
    await eventually(() => !window.active, "the window ends", 1000);
  });
});

describe("busy polling over a socket", () => {
  /**
   * An echo server answering after `delayMs` and a client polling for `busyPollMicros`: over a
   * mux pair (the mux polls), or over a bare socket (the ttrpc client polls).
   */
  async function pair(busyPollMicros: number, delayMs: number, over: "mux" | "socket" = "mux"): Promise<{ call: () => Promise<void>; close: () => void }> {
    const [a, b, done] = await trunkPair();
    const echo = new Server().register("s.Echo", {
      Echo: {
        kind: "unary" as const,
        handler: async (r: Uint8Array) => {
          if (delayMs > 0) await sleep(delayMs);
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

  it.each(["mux", "socket"] as const)("over a %s, the event loop turns while a quick answer is awaited, and stops turning once the window has passed", async (over) => {
    const p = await pair(5000, 0, over);
    await eventually(() => !processPollWindow.active, "no window open before the test");
    const before = processPollWindow.turns;
    for (let i = 0; i < 20; i++) await p.call();
    expect(processPollWindow.turns).toBeGreaterThan(before);
    await eventually(() => !processPollWindow.active, "the window ends", 1000);
    p.close();
  });

  it("a peer slower than the window gets one polled call, then none; with 0 there are none", async () => {
    const slow = await pair(2000, 20);
    await eventually(() => !processPollWindow.active, "no window open before the test");
    await slow.call();
    await eventually(() => !processPollWindow.active, "the first window ends", 1000);
    const before = processPollWindow.turns;
    for (let i = 0; i < 3; i++) await slow.call();
    expect(processPollWindow.turns).toBe(before);
    slow.close();
    const off = await pair(0, 0);
    for (let i = 0; i < 10; i++) await off.call();
    expect([processPollWindow.turns, processPollWindow.active]).toEqual([before, false]);
    off.close();
  });
});
