import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Client } from "../../src/ttrpc/client.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { Code } from "../../src/ttrpc/status.js";
import { runs } from "../support/fc.js";
import { eventually, waitFor } from "../support/wait.js";
import { type Harness, dec, enc, useHarness } from "./harness.js";

/** What the model knows: how many connections were dropped so far. */
interface Model {
  generation: number;
}

/** One call started by a command, with what its outcome must be. */
interface Outcome {
  readonly what: string;
  readonly settled: Promise<void>;
}

interface Real {
  harness: Harness;
  client: Client;
  outcomes: Outcome[];
  settles: Map<string, number>;
}

let seq = 0;

/** Tracks a call: it must settle exactly once, and `check` must accept how it settled. */
function track<T>(real: Real, what: string, p: Promise<T>, check: (r: { ok: true; value: T } | { ok: false; error: unknown }) => void): void {
  const id = `${what}#${seq++}`;
  real.settles.set(id, 0);
  const settled = p.then(
    (value) => {
      real.settles.set(id, real.settles.get(id)! + 1);
      check({ ok: true, value });
    },
    (error: unknown) => {
      real.settles.set(id, real.settles.get(id)! + 1);
      check({ ok: false, error });
    },
  );
  real.outcomes.push({ what: id, settled });
}

/** Errors a call may end with when the connection drops under it. */
function droppedOrOk(r: { ok: boolean; error?: unknown }): void {
  if (!r.ok) {
    expect(r.error).toBeInstanceOf(RpcError);
    expect([Code.UNAVAILABLE, Code.CANCELED]).toContain((r.error as RpcError).code);
  }
}

class Unary implements fc.AsyncCommand<Model, Real> {
  constructor(readonly payload: string) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    track(r, "unary", r.client.call("t.Test", "Echo", enc(this.payload)), (res) => {
      if (res.ok) expect(dec(res.value)).toBe(this.payload);
      else droppedOrOk(res);
    });
  }
  toString = (): string => `Unary(${JSON.stringify(this.payload)})`;
}

class Failing implements fc.AsyncCommand<Model, Real> {
  constructor(readonly code: number) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    track(r, "fail", r.client.call("t.Test", "Fail", enc(String(this.code))), (res) => {
      expect(res.ok).toBe(false);
      if (!res.ok && (res.error as RpcError).code !== Code.UNAVAILABLE) {
        expect((res.error as RpcError).code).toBe(this.code);
      }
    });
  }
  toString = (): string => `Failing(${this.code})`;
}

class Cancel implements fc.AsyncCommand<Model, Real> {
  constructor(readonly afterMs: number) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    const ac = new AbortController();
    track(r, "cancel", r.client.call("t.Test", "Sleep", enc("200"), { signal: ac.signal }), (res) => {
      expect(res.ok).toBe(false);
      if (!res.ok) expect([Code.CANCELED, Code.UNAVAILABLE]).toContain((res.error as RpcError).code);
    });
    setTimeout(() => ac.abort(new Error("test")), this.afterMs);
  }
  toString = (): string => `Cancel(${this.afterMs})`;
}

class Timeout implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    track(r, "timeout", r.client.call("t.Test", "Sleep", enc("300"), { timeoutMs: this.ms }), (res) => {
      expect(res.ok).toBe(false);
      if (!res.ok) expect([Code.DEADLINE_EXCEEDED, Code.UNAVAILABLE]).toContain((res.error as RpcError).code);
    });
  }
  toString = (): string => `Timeout(${this.ms})`;
}

class ServerStream implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly n: number,
    readonly readOnly: number | undefined,
  ) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    const it = r.client.serverStream("t.Test", "Count", enc(String(this.n)));
    const read = (async () => {
      const got: string[] = [];
      for await (const m of it) {
        got.push(dec(m));
        if (this.readOnly !== undefined && got.length >= this.readOnly) break;
      }
      return got;
    })();
    track(r, "server-stream", read, (res) => {
      if (res.ok) {
        const want = Array.from({ length: Math.min(this.n, this.readOnly ?? this.n) }, (_, i) => String(i));
        expect(res.value).toEqual(want);
      } else droppedOrOk(res);
    });
  }
  toString = (): string => `ServerStream(${this.n}, read ${this.readOnly ?? "all"})`;
}

class ClientStream implements fc.AsyncCommand<Model, Real> {
  constructor(readonly values: number[]) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    const values = this.values;
    async function* input(): AsyncIterable<Uint8Array> {
      for (const v of values) yield enc(String(v));
    }
    track(r, "client-stream", r.client.clientStream("t.Test", "Sum", input()), (res) => {
      if (res.ok) expect(Number(dec(res.value))).toBe(values.reduce((a, b) => a + b, 0));
      else droppedOrOk(res);
    });
  }
  toString = (): string => `ClientStream(${JSON.stringify(this.values)})`;
}

class Bidi implements fc.AsyncCommand<Model, Real> {
  constructor(readonly values: string[]) {}
  check = (): boolean => true;
  async run(_m: Model, r: Real): Promise<void> {
    const values = this.values;
    async function* input(): AsyncIterable<Uint8Array> {
      for (const v of values) yield enc(v);
    }
    const read = (async () => {
      const got: string[] = [];
      for await (const m of r.client.bidiStream("t.Test", "Chat", input())) got.push(dec(m));
      return got;
    })();
    track(r, "bidi", read, (res) => {
      if (res.ok) expect(res.value).toEqual(values);
      else droppedOrOk(res);
    });
  }
  toString = (): string => `Bidi(${JSON.stringify(this.values)})`;
}

class Drop implements fc.AsyncCommand<Model, Real> {
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    m.generation++;
    r.client.close();
    expect(r.client.pending).toBe(0);
    r.client = await r.harness.client();
  }
  toString = (): string => "Drop";
}

const commands = [
  fc.string({ maxLength: 30 }).map((s) => new Unary(s)),
  fc.integer({ min: 1, max: 16 }).map((c) => new Failing(c)),
  fc.integer({ min: 0, max: 20 }).map((ms) => new Cancel(ms)),
  fc.integer({ min: 1, max: 20 }).map((ms) => new Timeout(ms)),
  fc.tuple(fc.integer({ min: 0, max: 50 }), fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined })).map(([n, k]) => new ServerStream(n, k)),
  fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 10 }).map((v) => new ClientStream(v)),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 10 }).map((v) => new Bidi(v)),
  fc.constant(new Drop()),
];

describe("ttrpc client/server model", () => {
  const harness = useHarness();

  it("every call settles exactly once with the right outcome and no stream leaks", async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), async (cmds) => {
        const real: Real = { harness, client: await harness.client(), outcomes: [], settles: new Map() };
        await fc.asyncModelRun(() => ({ model: { generation: 0 }, real }), cmds);
        // No deadline of its own: a call left hanging times the test out, named.
        await waitFor(Promise.all(real.outcomes.map((o) => o.settled)), () => `every call to settle; hanging: ${[...real.settles].filter(([, n]) => n === 0).map(([k]) => k).join(", ")}`);
        for (const [what, n] of real.settles) expect(n, what).toBe(1);
        expect(real.client.pending).toBe(0);
        real.client.close();
        // Server side: once every client is gone, no call is left on any connection.
        await eventually(() => harness.connections.every((c) => c.active === 0), "every server call to end");
      }),
      { numRuns: runs(0.3) },
    );
  }, 300_000);
});
