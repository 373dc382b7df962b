import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { NriRuntime } from "../../src/runtime/index.js";
import { runs } from "../support/fc.js";
import { type LogRecorder, type ScriptedPlugin, runCleanups, scriptedPlugin, startRuntime } from "../support/nri-runtime.js";

afterEach(runCleanups);

const pod = { id: "pod0" };

interface ModelPlugin {
  id: string;
  idx: string;
  fails: boolean;
  open: boolean;
}

interface Model {
  plugins: ModelPlugin[];
  seq: number;
}

interface Real {
  runtime: NriRuntime;
  socket: string;
  logs: LogRecorder;
  handles: Map<string, ScriptedPlugin>;
  invoked: string[];
}

/** Invocation order: by index, equal indices in the order they joined. */
function ordered(m: Model): ModelPlugin[] {
  return [...m.plugins].sort((a, b) => (a.idx < b.idx ? -1 : a.idx > b.idx ? 1 : 0));
}

class Join implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly idx: string,
    readonly fails: boolean,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.plugins.length < 6;
  }
  async run(m: Model, r: Real): Promise<void> {
    const name = `p${m.seq++}`;
    const id = `${this.idx}-${name}`;
    const fails = this.fails;
    const handle = await scriptedPlugin(r.socket, {
      idx: this.idx,
      name,
      impl: {
        runPodSandbox: () => {
          r.invoked.push(id);
          if (fails) throw new Error(`${id} refuses`);
          return {};
        },
      },
    });
    r.handles.set(id, handle);
    // Joining re-sorts the registry, which drops closed plugins too, as the reference does.
    m.plugins = m.plugins.filter((p) => p.open);
    m.plugins.push({ id, idx: this.idx, fails, open: true });
    await r.runtime.waitForPlugins(m.plugins.filter((p) => p.open).length);
    expect(r.runtime.plugins.map((p) => p.id)).toEqual(ordered(m).map((p) => p.id));
  }
  toString(): string {
    return `join(${this.idx}${this.fails ? ", fails" : ""})`;
  }
}

class Close implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check(m: Readonly<Model>): boolean {
    return m.plugins.some((p) => p.open);
  }
  async run(m: Model, r: Real): Promise<void> {
    const open = m.plugins.filter((p) => p.open);
    const p = open[this.pick % open.length]!;
    p.open = false;
    r.handles.get(p.id)!.mux.close();
    await r.logs.waitFor((l) => l === `info: connection to plugin "${p.id}" closed`);
    // A closed plugin stays registered, marked closed, until the end of the next event.
    expect(r.runtime.plugins.find((x) => x.id === p.id)?.closed).toBe(true);
  }
  toString(): string {
    return `close(${this.pick})`;
  }
}

class Event implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    const expected: string[] = [];
    let failure: string | undefined;
    for (const p of ordered(m)) {
      if (!p.open) continue;
      expected.push(p.id);
      if (p.fails) {
        failure = `rpc error: code = Unknown desc = ${p.id} refuses`;
        break;
      }
    }
    r.invoked.length = 0;
    const outcome = await r.runtime.runPodSandbox({ pod }).then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(outcome).toBe(failure);
    expect(r.invoked).toEqual(expected);
    m.plugins = m.plugins.filter((p) => p.open);
    expect(r.runtime.plugins.map((p) => p.id)).toEqual(ordered(m).map((p) => p.id));
  }
  toString(): string {
    return "event";
  }
}

describe("plugin registry and lifecycle (model)", () => {
  it("invokes open plugins in index order, stops at the first failure, skips closed ones and drops them after the event or the next join", async () => {
    const commands = [
      fc.tuple(fc.constantFrom("10", "20", "30"), fc.nat(4).map((n) => n === 0)).map(([idx, fails]) => new Join(idx, fails)),
      fc.nat(5).map((n) => new Close(n)),
      fc.constant(new Event()),
    ];
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 12 }), async (cmds) => {
        const { runtime, socket, logs } = await startRuntime();
        const real: Real = { runtime, socket, logs, handles: new Map(), invoked: [] };
        try {
          await fc.asyncModelRun(() => ({ model: { plugins: [], seq: 0 }, real }), cmds);
        } finally {
          await runtime.stop();
        }
      }),
      { numRuns: runs(0.3) },
    );
  }, 300_000);

  it("a plugin joins only between events", async () => {
    const { runtime, socket } = await startRuntime();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const invoked: string[] = [];
    await scriptedPlugin(socket, {
      idx: "50",
      name: "holder",
      impl: {
        runPodSandbox: async () => {
          invoked.push("50-holder");
          entered();
          await held;
          return {};
        },
      },
    });
    await runtime.waitForPlugins(1);
    const event = runtime.runPodSandbox({ pod });
    await inside;
    // A plugin with a lower index registers while the event is in progress...
    const late = await scriptedPlugin(socket, { idx: "10", name: "late", impl: { runPodSandbox: () => (invoked.push("10-late"), {}) } });
    void late;
    expect(runtime.plugins.map((p) => p.id)).toEqual(["50-holder"]);
    release();
    await event;
    // ...and takes part only from the next event on.
    expect(invoked).toEqual(["50-holder"]);
    await runtime.waitForPlugins(2);
    invoked.length = 0;
    await runtime.runPodSandbox({ pod });
    expect(invoked).toEqual(["10-late", "50-holder"]);
  });
});
