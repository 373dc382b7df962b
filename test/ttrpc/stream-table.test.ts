import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StreamTable } from "../../src/ttrpc/stream-table.js";

interface Model {
  readonly map: Map<number, { id: number }>;
  nextId: number;
}
type Real = StreamTable<{ id: number }>;

/** Every observable of the table against the Map it stands for: size, each id's value, values in order. */
function same(m: Model, r: Real): void {
  expect(r.size).toBe(m.map.size);
  for (let id = -1; id <= m.nextId + 1; id++) expect(r.get(id)).toBe(m.map.get(id));
  expect(r.values()).toEqual([...m.map.values()]);
}

class Open implements fc.Command<Model, Real> {
  constructor(readonly step: number) {}
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    // Stream ids only grow on a connection, by two (one side's ids are all odd).
    m.nextId += this.step;
    const v = { id: m.nextId };
    m.map.set(m.nextId, v);
    r.set(m.nextId, v);
    same(m, r);
  }
  toString = (): string => `open +${this.step}`;
}

class Replace implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>): boolean => m.map.size > 0;
  run(m: Model, r: Real): void {
    const id = [...m.map.keys()][this.pick % m.map.size]!;
    const v = { id };
    m.map.set(id, v);
    r.set(id, v);
    same(m, r);
  }
  toString = (): string => `replace #${this.pick}`;
}

class End implements fc.Command<Model, Real> {
  constructor(
    readonly pick: number,
    readonly missing: boolean,
  ) {}
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    const ids = [...m.map.keys()];
    const id = this.missing || ids.length === 0 ? m.nextId + 2 : ids[this.pick % ids.length]!;
    expect(r.delete(id)).toBe(m.map.delete(id));
    same(m, r);
  }
  toString = (): string => `end ${this.missing ? "unknown" : `#${this.pick}`}`;
}

class Clear implements fc.Command<Model, Real> {
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    m.map.clear();
    r.clear();
    same(m, r);
  }
  toString = (): string => "clear";
}

describe("StreamTable", () => {
  it("behaves as a Map of the streams in flight, values oldest first, whatever the order calls end in", () => {
    const commands = [
      fc.integer({ min: 1, max: 3 }).map((n) => new Open(2 * n)),
      fc.nat().map((n) => new Replace(n)),
      fc.tuple(fc.nat(), fc.boolean()).map(([n, missing]) => new End(n, missing)),
      fc.constant(new Clear()),
    ];
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 40 }), (cmds) => {
        fc.modelRun(() => ({ model: { map: new Map(), nextId: -1 }, real: new StreamTable<{ id: number }>() }), cmds);
      }),
      { numRuns: 300 },
    );
  });

  it("holds one stream at a time without a Map, and makes one only for streams side by side", () => {
    const t = new StreamTable<{ id: number }>();
    const more = (): Map<number, unknown> | undefined => (t as unknown as { more?: Map<number, unknown> }).more;
    for (let id = 1; id < 100; id += 2) {
      t.set(id, { id });
      t.delete(id);
    }
    const serial = more();
    t.set(101, { id: 101 });
    t.set(103, { id: 103 });
    expect([serial, more()?.size, t.size]).toEqual([undefined, 1, 2]);
  });
});
