import { unlink } from "node:fs/promises";
import { type Socket, connect, createServer } from "node:net";
import { join } from "node:path";
import { type DescMessage, type MessageInitShape, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  ConfigureResponseSchema,
  CreateContainerRequestSchema,
  CreateContainerResponseSchema,
  Plugin,
  RegisterPluginRequestSchema,
  SynchronizeRequestSchema,
  SynchronizeResponseSchema,
  UpdateContainerResponseSchema,
  UpdateContainersRequestSchema,
} from "../../gen/v1beta1/api_pb.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../../src/mux/mux.js";
import type { PluginInstance, PluginStarter } from "../../src/testing/plugin-starter.js";
import { Client } from "../../src/ttrpc/client.js";
import { type CallContext, type RawMethod, Server } from "../../src/ttrpc/server.js";
import { socketDir } from "../interop/support.js";

/**
 * A minimal v1beta1 plugin written against the wire (mux, ttrpc, raw payloads) so that each
 * flaw can break exactly one rule the conformance runner checks. Without a flaw it subscribes to
 * every event, answers every call with the empty answer (Synchronize echoing `more`) and exits
 * when its connection closes, as a launched plugin does.
 */
export const FLAWS = [
  "registration",
  "configure",
  "synchronize",
  "events",
  "teardown",
  "adjustments",
  "ids",
  "creating",
  "merge",
  "timeouts",
  "alive",
  "unsolicited",
  "shutdown",
  "after-shutdown",
  "restart",
] as const;

/**
 * A flaw that breaks one check each, or `undecodable`: CreateContainer answered with bytes
 * protobuf-es reads (field 1 with the wrong wire type, read as an empty message) and the
 * runtime's strict decoder refuses.
 */
export type Flaw = (typeof FLAWS)[number] | "undecodable";

const bytes = <D extends DescMessage>(schema: D, init: MessageInitShape<D>): Uint8Array => toBinary(schema, create(schema, init));

function runBroken(socket: Socket, flaw: Flaw | undefined, exit: (why: string) => void): void {
  const mux = new Mux(socket);
  const runtime = new Client(mux.open(RUNTIME_SERVICE_CONN));
  const updateContainers = (id: string): Promise<Uint8Array> =>
    runtime.call("nri.pkg.api.v1beta1.Runtime", "UpdateContainers", bytes(UpdateContainersRequestSchema, { update: [{ containerId: id }] }));
  const answers: Record<string, (payload: Uint8Array, ctx: CallContext) => Uint8Array | Promise<Uint8Array>> = {
    Configure: () => bytes(ConfigureResponseSchema, { events: flaw === "configure" ? 1 << 20 : 0 }),
    Synchronize: (p) => bytes(SynchronizeResponseSchema, { more: flaw === "synchronize" ? false : fromBinary(SynchronizeRequestSchema, p).more }),
  };
  const boom = (): never => {
    throw new Error("boom");
  };
  if (flaw === "events") answers.RunPodSandbox = boom;
  if (flaw === "teardown") answers.StopContainer = boom;
  if (flaw === "shutdown") answers.Shutdown = boom;
  // A CreateContainerResponse's adjustment where StartContainerResponse has no field.
  if (flaw === "adjustments") answers.StartContainer = () => bytes(CreateContainerResponseSchema, { adjust: { annotations: { a: "b" } } });
  if (flaw === "undecodable") answers.CreateContainer = () => Uint8Array.of(0x0d, 0x00);
  if (flaw === "ids") answers.UpdateContainer = () => bytes(UpdateContainerResponseSchema, { update: [{ containerId: "ghost" }] });
  if (flaw === "creating") {
    answers.CreateContainer = (p) => bytes(CreateContainerResponseSchema, { update: [{ containerId: fromBinary(CreateContainerRequestSchema, p).container!.id }] });
  }
  if (flaw === "merge") {
    answers.CreateContainer = () => bytes(CreateContainerResponseSchema, { adjust: { env: [{ key: "TWICE", value: "1" }, { key: "TWICE", value: "2" }] } });
  }
  if (flaw === "timeouts") {
    // Answers only once the runtime has given up on the call.
    answers.UpdateContainer = (_, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve(new Uint8Array(0))));
  }
  if (flaw === "alive") {
    answers.PostStartContainer = () => {
      mux.close(new Error("crashed"));
      return boom();
    };
  }
  if (flaw === "unsolicited") answers.PostStartContainer = async () => (await updateContainers("ghost"), new Uint8Array(0));
  if (flaw === "after-shutdown") {
    answers.Shutdown = () => {
      // Some time after its answer: a write that should never come.
      setTimeout(() => void updateContainers("ctr1").catch(() => undefined), 50);
      return new Uint8Array(0);
    };
  }
  const methods: Record<string, RawMethod> = {};
  for (const m of Plugin.methods) methods[m.name] = { kind: "unary", handler: (p, ctx) => (answers[m.name] ?? (() => new Uint8Array(0)))(p, ctx) };
  new Server().register("nri.pkg.api.v1beta1.Plugin", methods).serve(mux.open(PLUGIN_SERVICE_CONN));
  void mux.closed.then(() => {
    if (flaw !== "restart") exit("exited when its connection closed");
  });
  const name = flaw === "registration" ? "other" : "broken";
  void runtime.call("nri.pkg.api.v1beta1.Runtime", "RegisterPlugin", bytes(RegisterPluginRequestSchema, { pluginName: name, pluginIdx: "50" })).catch(() => undefined);
}

/** Starts in-process instances of the plugin with `flaw`, each on a fresh unix socket connection. */
export function brokenStarter(flaw: Flaw | undefined): PluginStarter {
  const path = join(socketDir(), "broken.sock");
  const stops: (() => void)[] = [];
  return {
    description: `in-process plugin with flaw ${flaw ?? "none"}`,
    expected: { name: "broken", idx: "50" },
    async start(): Promise<PluginInstance> {
      const server = createServer();
      await new Promise<void>((r) => server.listen(path, () => r()));
      const accepted = new Promise<Socket>((r) => server.once("connection", r));
      const plugin = connect(path);
      const socket = await accepted;
      // Stop listening; close's callback would wait for this very connection to end.
      server.close();
      await unlink(path).catch(() => undefined);
      let exit!: (why: string) => void;
      const gone = new Promise<string>((r) => (exit = r));
      runBroken(plugin, flaw, exit);
      const kill = (): void => {
        plugin.destroy();
        exit("was killed");
      };
      stops.push(kill);
      return { socket, gone, restartable: true, kill };
    },
    async close(): Promise<void> {
      for (const s of stops) s();
    },
  };
}
