import { describe, expect, it } from "vitest";
import { EventLedger } from "../../../bench/soak/ledger.js";
import { signal } from "../../support/wait.js";

describe("soak event ledger", () => {
  it("counts results, and errors by message with pod and container names folded", async () => {
    const ledger = new EventLedger(1000);
    await ledger.track("runPodSandbox pod-1", async () => 1);
    await ledger.track("createContainer pod-1-ctr-0", async () => {
      throw new Error("validator rejected pod-1-ctr-0");
    });
    expect(ledger.counts()).toEqual({ issued: 2, ok: 1, error: 1, pending: 0 });
    expect([...ledger.errors]).toEqual([["validator rejected *", 1]]);
  });

  it("names the oldest event once it is past its bound, measured from its turn", async () => {
    let now = 0;
    const ledger = new EventLedger(100, () => now);
    const first = signal();
    const second = signal();
    const a = ledger.track("createContainer pod-1-ctr-0", () => first.promise);
    const b = ledger.track("startContainer pod-2-ctr-0", () => second.promise);
    const overdueAt = (t: number): string | undefined => {
      now = t;
      return ledger.overdue();
    };
    expect(overdueAt(100)).toBeUndefined();
    expect(overdueAt(150)).toBe("soak: createContainer pod-1-ctr-0 has not settled 150 ms after its turn (bound 100 ms; 2 events pending)");
    first.fire();
    await a;
    // The second event's turn began when the first settled, at 150.
    expect(overdueAt(240)).toBeUndefined();
    expect(overdueAt(260)).toBe("soak: startContainer pod-2-ctr-0 has not settled 110 ms after its turn (bound 100 ms; 1 events pending)");
    second.fire();
    await b;
    expect(ledger.overdue()).toBeUndefined();
    expect(ledger.maxLatencyMs).toBe(260);
    expect(ledger.maxTurnMs).toBe(150);
    await ledger.idle();
  });

  it("resolves idle once the last pending event settles", async () => {
    const ledger = new EventLedger(1000);
    const s = signal();
    const pending = ledger.track("stopPodSandbox pod-1", () => s.promise);
    let idle = false;
    const waiting = ledger.idle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(false);
    s.fire();
    await pending;
    await waiting;
    expect(idle).toBe(true);
  });
});
