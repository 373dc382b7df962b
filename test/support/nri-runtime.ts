import { type Socket, connect } from "node:net";
import { join } from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Plugin, Runtime } from "../../gen/v1beta1/api_pb.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../../src/mux/mux.js";
import { type PluginHandlers, eventsOf } from "../../src/plugin/index.js";
import { NriRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import { messages } from "../../src/api/messages.js";
import { Client } from "../../src/ttrpc/client.js";
import { Server } from "../../src/ttrpc/server.js";
import { type ServiceClient, type ServiceImpl, createClient, serviceMethods } from "../../src/ttrpc/typed.js";
import { tempDir } from "./temp.js";

/** Things to undo after each test, newest first. */
export const cleanups: (() => unknown)[] = [];

/** Runs and forgets every cleanup; call from afterEach. */
export async function runCleanups(): Promise<void> {
  for (const f of cleanups.splice(0).reverse()) await f();
}

/** Everything a runtime logged, by level, with a way to wait for a message. */
export class LogRecorder {
  readonly lines: string[] = [];
  private readonly waiters: { pred: (l: string) => boolean; resolve: (l: string) => void }[] = [];

  readonly log = {
    info: (m: string) => this.add(`info: ${m}`),
    warn: (m: string) => this.add(`warn: ${m}`),
    error: (m: string) => this.add(`error: ${m}`),
  };

  /** Resolves with the first line (`level: message`) for which `pred` holds, already seen or to come. */
  waitFor(pred: (line: string) => boolean): Promise<string> {
    const seen = this.lines.find(pred);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  /** Lines at one level, without the level. */
  at(level: "info" | "warn" | "error"): string[] {
    return this.lines.filter((l) => l.startsWith(`${level}: `)).map((l) => l.slice(level.length + 2));
  }

  private add(line: string): void {
    this.lines.push(line);
    for (const w of [...this.waiters]) {
      if (w.pred(line)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  }
}

/** A started runtime on a fresh socket with no pre-installed plugins, stopped after the test. */
export async function startRuntime(options: Partial<RuntimeOptions> = {}): Promise<{ runtime: NriRuntime; socket: string; logs: LogRecorder }> {
  const logs = new LogRecorder();
  const dir = tempDir();
  const runtime = new NriRuntime({
    name: "test-runtime",
    version: "0.0.0",
    socketPath: join(dir, "nri.sock"),
    pluginPath: join(dir, "no-plugins"),
    pluginConfigPath: join(dir, "no-conf"),
    log: logs.log,
    ...options,
  });
  await runtime.start();
  cleanups.push(() => runtime.stop());
  return { runtime, socket: runtime.socketPath ?? "", logs };
}

type PluginImpl = ServiceImpl<(typeof Plugin)["method"]>;

/** A plugin built from raw parts, answering exactly what the test scripts. */
export interface ScriptedPlugin {
  readonly mux: Mux;
  readonly socket: Socket;
  /** The runtime's service, as the plugin calls it. */
  readonly runtime: ServiceClient<(typeof Runtime)["method"]>;
  /** Method names in the order the runtime called them. */
  readonly calls: string[];
  /** Settles when the connection ends. */
  readonly closed: Promise<Error>;
}

/**
 * Connects a scripted v1beta1 plugin: `impl` serves the Plugin service; Configure answers
 * `configure` (by default subscribing to the events `impl` handles), Synchronize is empty unless
 * scripted; it registers as `idx-name` unless told not to.
 */
export async function scriptedPlugin(
  path: string,
  o: {
    idx?: string;
    name?: string;
    configure?: MessageInitShape<(typeof Plugin)["method"]["configure"]["output"]>;
    impl?: PluginImpl;
    /** Methods answered with raw bytes, by wire name (they win over `impl`). */
    raw?: Record<string, (payload: Uint8Array) => Uint8Array>;
    register?: boolean;
  },
): Promise<ScriptedPlugin> {
  const socket = connect(path);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.on("error", () => undefined);
  const mux = new Mux(socket);
  cleanups.push(() => mux.close());
  const calls: string[] = [];
  // Unless told otherwise, subscribe to exactly the events `impl` handles (0 would mean all).
  const events = eventsOf((o.impl ?? {}) as PluginHandlers);
  const impl: PluginImpl = {
    configure: () => ({ events, ...o.configure }),
    synchronize: () => ({}),
    ...o.impl,
  };
  const traced: Record<string, unknown> = {};
  for (const m of Plugin.methods) {
    const h = (impl as Record<string, ((req: never, ctx: never) => unknown) | undefined>)[m.localName];
    if (h === undefined) continue;
    traced[m.localName] = (req: never, ctx: never) => {
      calls.push(m.name);
      return h(req, ctx);
    };
  }
  const methods = { ...serviceMethods(Plugin, traced as PluginImpl, { messages }) };
  for (const [name, handler] of Object.entries(o.raw ?? {})) {
    methods[name] = {
      kind: "unary",
      handler: (payload) => {
        calls.push(name);
        return handler(payload);
      },
    };
  }
  new Server().register(Plugin.typeName, methods).serve(mux.open(PLUGIN_SERVICE_CONN));
  const runtime = createClient(Runtime, new Client(mux.open(RUNTIME_SERVICE_CONN)), { messages });
  if (o.register !== false) await runtime.registerPlugin({ pluginName: o.name ?? "scripted", pluginIdx: o.idx ?? "10" });
  return { mux, socket, runtime, calls, closed: mux.closed };
}
