import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { type DeadlineClock, DeadlineQueues } from "../../src/ttrpc/deadlines.js";
import { runs } from "../support/fc.js";

/** A clock moved by hand, with the timers it has handed out. */
class ManualClock implements DeadlineClock {
  t = 0;
  timers: { at: number; fn: () => void; refd: boolean; done: boolean }[] = [];

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): { ref(): void; unref(): void } {
    const timer = { at: this.t + ms, fn, refd: true, done: false };
    this.timers.push(timer);
    return {
      ref: () => void (timer.refd = true),
      unref: () => void (timer.refd = false),
    };
  }

  /** Moves to `to`, running each timer that falls due, earliest first. */
  advance(to: number): void {
    for (;;) {
      const due = this.timers.filter((x) => !x.done && x.at <= to).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.t = Math.max(this.t, due.at);
      due.done = true;
      due.fn();
    }
    this.t = to;
  }

  /** Timers that would keep a process alive. */
  get holding(): number {
    return this.timers.filter((x) => !x.done && x.refd).length;
  }

  /** Timers not yet run. */
  get armed(): number {
    return this.timers.filter((x) => !x.done).length;
  }
}

type Op = { kind: "start"; ms: number } | { kind: "clear"; pick: number } | { kind: "advance"; by: number };

const ops = fc.array(
  fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant("start" as const), ms: fc.oneof(fc.constantFrom(10, 25), fc.integer({ min: 0, max: 60 })) }), weight: 4 },
    { arbitrary: fc.record({ kind: fc.constant("clear" as const), pick: fc.nat() }), weight: 3 },
    { arbitrary: fc.record({ kind: fc.constant("advance" as const), by: fc.integer({ min: 0, max: 30 }) }), weight: 3 },
  ),
  { maxLength: 60 },
);

describe("deadline queues", () => {
  it("fire exactly the deadlines that have passed and were not cleared, hold the process only while one is pending, and let idle queues go", () => {
    fc.assert(
      fc.property(ops, (script) => {
        const clock = new ManualClock();
        const q = new DeadlineQueues(clock);
        // The model: every deadline started, when it falls due, and whether it fired or was cleared.
        // A deadline due at once still waits for its timer, which runs when the clock is moved.
        const model: { at: number; fired: number; cleared: boolean; moved: boolean; handle: { clear(): void } }[] = [];
        const advance = (to: number): void => {
          for (const m of model) m.moved = true;
          clock.advance(to);
        };
        const check = (): void => {
          for (const m of model) expect(m.fired).toBe(!m.cleared && m.moved && m.at <= clock.t ? 1 : 0);
          const pending = model.some((m) => !m.cleared && m.fired === 0);
          expect(clock.holding > 0).toBe(pending);
        };
        for (const op of script) {
          if (op.kind === "start") {
            const m: (typeof model)[number] = { at: clock.t + op.ms, fired: 0, cleared: false, moved: false, handle: { clear: () => undefined } };
            m.handle = q.start(() => m.fired++, op.ms);
            model.push(m);
          } else if (op.kind === "clear") {
            const m = model[op.pick % Math.max(1, model.length)];
            if (m !== undefined) {
              m.handle.clear();
              if (m.fired === 0) m.cleared = true;
            }
          } else advance(clock.t + op.by);
          check();
        }
        // Past every deadline, and then a whole period more: nothing is held or kept.
        advance(clock.t + 61);
        advance(clock.t + 61);
        check();
        expect([q.size, clock.armed]).toEqual([0, 0]);
      }),
      { numRuns: runs(5) },
    );
  });

  it("serves a stream of calls with one timer, not one per call", () => {
    const clock = new ManualClock();
    const q = new DeadlineQueues(clock);
    for (let i = 0; i < 1000; i++) {
      clock.advance(clock.t + 0.01);
      q.start(() => undefined, 10_000).clear();
    }
    expect([clock.timers.length, clock.holding, q.size]).toEqual([1, 0, 1]);
    clock.advance(clock.t + 10_000);
    expect([clock.timers.length, clock.armed, q.size]).toEqual([1, 0, 0]);
  });

  it("fires a later deadline of the same timeout in its own time, not with the one before it", () => {
    const clock = new ManualClock();
    const q = new DeadlineQueues(clock);
    const fired: string[] = [];
    q.start(() => fired.push(`a@${clock.t}`), 10);
    clock.advance(1);
    q.start(() => fired.push(`b@${clock.t}`), 10);
    clock.advance(10);
    expect(fired).toEqual(["a@10"]);
    clock.advance(11);
    expect(fired).toEqual(["a@10", "b@11"]);
  });

  it("a deadline that fires may start another, which fires in its turn", () => {
    const clock = new ManualClock();
    const q = new DeadlineQueues(clock);
    const fired: number[] = [];
    q.start(() => {
      fired.push(clock.t);
      q.start(() => fired.push(clock.t), 5);
    }, 5);
    clock.advance(20);
    expect(fired).toEqual([5, 10]);
    expect(clock.armed).toBe(0);
  });

  it("waits past Node's longest timer delay in steps", () => {
    const clock = new ManualClock();
    const q = new DeadlineQueues(clock);
    let fired = 0;
    const ms = 3 * 0x7fffffff;
    q.start(() => fired++, ms);
    clock.advance(ms - 1);
    expect(fired).toBe(0);
    clock.advance(ms);
    expect(fired).toBe(1);
  });
});
