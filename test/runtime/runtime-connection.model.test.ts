import { type Server as NetServer, Socket, connect, createServer } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { Plugin as AlphaPlugin } from "../../gen/v1alpha1/api_pb.js";
import { RegisterPluginRequestSchema, UpdateContainersRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../../src/mux/mux.js";
import { type Registration, RuntimeConnection } from "../../src/runtime/runtime-connection.js";
import type { Revision } from "../../src/translate/index.js";
import { stateChangeEventOf } from "../../src/translate/index.js";
import { Client } from "../../src/ttrpc/client.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { type RawMethod, Server } from "../../src/ttrpc/server.js";
import { Code } from "../../src/ttrpc/status.js";
import { encodeInit } from "../../src/api/messages.js";
import { runs } from "../support/fc.js";
import { socketPath } from "../support/socket.js";

/**
 * The runtime-side connection core as a state machine, against a plugin played on the wire:
 * registration (first one wins, a bad name is refused), the revision calls go in, the switch of
 * a StateChange-era plugin to StateChange on its first UNIMPLEMENTED, one deprecation per event,
 * unsolicited updates on the served revisions, and the end of the connection.
 */

/** How the played plugin takes v1alpha1 calls: every dedicated method, or the v0.11 set. */
type Era = "dedicated" | "statechange";
/** What a StateChange-era (v0.11) plugin implements. */
const OLD_METHODS = new Set(["Configure", "Synchronize", "Shutdown", "CreateContainer", "UpdateContainer", "StopContainer", "StateChange"]);
const METHODS = ["Configure", "Synchronize", "CreateContainer", "RunPodSandbox", "PostStartContainer", "RemoveContainer", "UpdatePodSandbox", "PostUpdatePodSandbox", "Shutdown"];
const PKG: Record<Revision, string> = { v1beta1: "nri.pkg.api.v1beta1", v1alpha1: "nri.pkg.api.v1alpha1" };

interface Model {
  readonly serves: readonly Revision[];
  readonly startedInStateChange: boolean;
  readonly era: Era;
  registration: Registration | undefined;
  /** How `registered` settled: the registration, or the refusal's text. */
  settled: Registration | string | undefined;
  stateChange: boolean;
  deprecated: string[];
  updates: string[];
  closed: boolean;
  seq: number;
}

interface Real {
  conn: RuntimeConnection;
  /** The plugin's end: calls to the Runtime service, and the Plugin calls it received. */
  runtime: Client;
  wire: string[];
  deprecated: string[];
  updates: string[];
}

class Register implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly revision: Revision,
    readonly valid: boolean,
  ) {}
  check(m: Readonly<Model>): boolean {
    return !m.closed;
  }
  async run(m: Model, r: Real): Promise<void> {
    const name = this.valid ? `p${m.seq++}` : "bad name";
    const call = r.runtime.call(`${PKG[this.revision]}.Runtime`, "RegisterPlugin", encodeInit(RegisterPluginRequestSchema, { pluginName: name, pluginIdx: "10" }));
    const outcome = await call.then(
      () => "ok",
      (e: RpcError) => e.message,
    );
    if (!m.serves.includes(this.revision)) {
      expect(outcome).toBe(`unimplemented: service ${PKG[this.revision]}.Runtime`);
      return;
    }
    if (m.registration !== undefined) return void expect(outcome).toBe("ok");
    if (!this.valid) {
      expect(outcome).toMatch(/^unknown: invalid plugin name: /u);
      m.settled ??= "failed to register plugin: plugin registered with an invalid name: ";
      return;
    }
    expect(outcome).toBe("ok");
    m.registration = { name, idx: "10", revision: this.revision };
    m.settled ??= m.registration;
  }
  toString(): string {
    return `Register(${this.revision}, ${this.valid ? "valid" : "bad name"})`;
  }
}

class Call implements fc.AsyncCommand<Model, Real> {
  constructor(readonly method: string) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    const from = r.wire.length;
    const outcome = await r.conn.call(this.method, new Uint8Array(0), { timeoutMs: 5000 }).then(
      () => "ok",
      (e: Error) => (e instanceof RpcError ? `code ${e.code}` : "failed"),
    );
    // A closed connection's calls fail as the ttrpc client's do: UNAVAILABLE, nothing sent.
    if (m.closed) return void expect([outcome, r.wire.length - from]).toEqual([`code ${Code.UNAVAILABLE}`, 0]);
    const revision = m.registration?.revision ?? "v1beta1";
    const want: string[] = [];
    let expected = "ok";
    if (revision === "v1beta1") want.push(`${PKG.v1beta1}.Plugin/${this.method}`);
    else {
      const isEvent = stateChangeEventOf(this.method) !== undefined;
      let via = m.stateChange && isEvent ? "StateChange" : this.method;
      // The plugin records only the calls it implements: UNIMPLEMENTED never reaches a handler.
      if (via !== "StateChange" && m.era === "statechange" && !OLD_METHODS.has(via)) {
        if (isEvent) {
          m.stateChange = true;
          via = "StateChange";
        } else expected = `code ${Code.UNIMPLEMENTED}`;
      }
      if (expected === "ok") want.push(`${PKG.v1alpha1}.Plugin/${via}`);
      if (via === "StateChange" && !m.startedInStateChange && !m.deprecated.includes(this.method)) m.deprecated.push(this.method);
    }
    expect([outcome, r.wire.slice(from)]).toEqual([expected, want]);
    expect([r.conn.stateChange, r.deprecated]).toEqual([m.stateChange, m.deprecated]);
  }
  toString(): string {
    return `Call(${this.method})`;
  }
}

class Update implements fc.AsyncCommand<Model, Real> {
  constructor(readonly revision: Revision) {}
  check(m: Readonly<Model>): boolean {
    return !m.closed;
  }
  async run(m: Model, r: Real): Promise<void> {
    const id = `c${m.seq++}`;
    const outcome = await r.runtime.call(`${PKG[this.revision]}.Runtime`, "UpdateContainers", encodeInit(UpdateContainersRequestSchema, { update: [{ containerId: id }] })).then(
      () => "ok",
      (e: RpcError) => e.message,
    );
    if (m.serves.includes(this.revision)) {
      m.updates.push(id);
      expect(outcome).toBe("ok");
    } else expect(outcome).toBe(`unimplemented: service ${PKG[this.revision]}.Runtime`);
    expect(r.updates).toEqual(m.updates);
  }
  toString(): string {
    return `Update(${this.revision})`;
  }
}

class Close implements fc.AsyncCommand<Model, Real> {
  check(m: Readonly<Model>): boolean {
    return !m.closed;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.conn.close(new Error("done"));
    await r.conn.mux.closed;
    m.closed = true;
    m.settled ??= "failed to register plugin, connection closed";
  }
  toString(): string {
    return "Close";
  }
}

const sockets: (NetServer | Socket)[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s instanceof Socket ? s.destroy() : s.close();
});

/** Both ends of a fresh unix socket connection. */
async function pair(): Promise<[Socket, Socket]> {
  const path = socketPath(`m${sockets.length}.sock`);
  const server = createServer();
  sockets.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  const accepted = new Promise<Socket>((r) => server.once("connection", r));
  const client = connect(path);
  const runtimeEnd = await accepted;
  sockets.push(client, runtimeEnd);
  return [runtimeEnd, client];
}

/** The plugin's end: answers every Plugin call it implements with an empty message, recording it. */
function playPlugin(socket: Socket, era: Era, wire: string[]): Client {
  const mux = new Mux(socket);
  const server = new Server();
  const answer = (service: string, names: Iterable<string>): void => {
    const methods: Record<string, RawMethod> = {};
    for (const name of names) methods[name] = { kind: "unary", handler: () => (wire.push(`${service}/${name}`), new Uint8Array(0)) };
    server.register(service, methods);
  };
  answer(`${PKG.v1beta1}.Plugin`, METHODS);
  answer(`${PKG.v1alpha1}.Plugin`, era === "statechange" ? OLD_METHODS : AlphaPlugin.methods.map((m) => m.name));
  server.serve(mux.open(PLUGIN_SERVICE_CONN));
  return new Client(mux.open(RUNTIME_SERVICE_CONN));
}

describe("the runtime-side connection core", () => {
  it("keeps registration, revision, StateChange fallback, deprecations and updates as the model says", async () => {
    const commands = [
      fc.tuple(fc.constantFrom<Revision>("v1beta1", "v1alpha1"), fc.boolean()).map(([rev, valid]) => new Register(rev, valid)),
      fc.constantFrom(...METHODS).map((m) => new Call(m)),
      fc.constantFrom<Revision>("v1beta1", "v1alpha1").map((rev) => new Update(rev)),
      fc.constant(new Close()),
    ];
    const setup = fc.record({ serves: fc.constantFrom<Revision[]>(["v1beta1", "v1alpha1"], ["v1alpha1"]), stateChange: fc.boolean(), era: fc.constantFrom<Era>("dedicated", "statechange") });
    await fc.assert(
      fc.asyncProperty(setup, fc.commands(commands, { maxCommands: 15 }), async (s, cmds) => {
        const [runtimeEnd, pluginEnd] = await pair();
        const wire: string[] = [];
        const deprecated: string[] = [];
        const updates: string[] = [];
        const conn = new RuntimeConnection(runtimeEnd, {
          serves: s.serves,
          stateChange: s.stateChange,
          checkIdentity: true,
          updateContainers: (req) => (updates.push(...req.update.map((u) => u.containerId)), []),
          deprecated: (method) => deprecated.push(method),
        });
        const runtime = playPlugin(pluginEnd, s.era, wire);
        const model: Model = { serves: s.serves, startedInStateChange: s.stateChange, era: s.era, registration: undefined, settled: undefined, stateChange: s.stateChange, deprecated: [], updates: [], closed: false, seq: 0 };
        try {
          await fc.asyncModelRun(() => ({ model, real: { conn, runtime, wire, deprecated, updates } }), cmds);
          if (!model.closed) await new Close().run(model, { conn, runtime, wire, deprecated, updates });
          const settled = await conn.registered.then(
            (reg) => reg,
            (e: Error) => (e.message.startsWith("failed to register plugin: plugin registered with an invalid name: ") ? "failed to register plugin: plugin registered with an invalid name: " : e.message),
          );
          expect(settled).toEqual(model.settled);
          expect(conn.registration).toEqual(model.registration);
        } finally {
          conn.close(new Error("done"));
        }
      }),
      { numRuns: runs(0.5) },
    );
  }, 120_000);
});
