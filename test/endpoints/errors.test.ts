import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Plugin as BetaPlugin } from "../../gen/v1beta1/api_pb.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../../src/mux/mux.js";
import { NriCallError } from "../../src/api/errors.js";
import { NriPlugin, type PluginHandlers } from "../../src/plugin/index.js";
import { EventError, NriRuntime } from "../../src/runtime/index.js";
import { listenUnix } from "../../src/api/socket.js";
import { Client } from "../../src/ttrpc/client.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { type RawMethod, Server } from "../../src/ttrpc/server.js";
import { Code } from "../../src/ttrpc/status.js";
import { createClient } from "../../src/ttrpc/typed.js";
import { messages } from "../../src/api/messages.js";
import { expectRejection } from "../support/errors.js";
import { socketPath } from "../support/socket.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

const pod = { id: "pod1" };
const container = { id: "c1" };

const caught = (p: Promise<unknown>): Promise<Error> => expectRejection(Error, p);

/**
 * A runtime made of raw parts: it answers RegisterPlugin (unless told otherwise), configures and
 * synchronizes the plugin, serves `runtime` methods, and hands out a raw client to the plugin.
 */
async function rawRuntime(runtime: Record<string, RawMethod> = {}): Promise<{ path: string; plugin: Promise<Client> }> {
  const path = socketPath();
  let gotPlugin!: (c: Client) => void;
  const plugin = new Promise<Client>((r) => (gotPlugin = r));
  const server = await listenUnix(path, (sock) => {
    const mux = new Mux(sock);
    cleanup.push(() => mux.close());
    const raw = new Client(mux.open(PLUGIN_SERVICE_CONN));
    const typed = createClient(BetaPlugin, raw, { messages });
    new Server()
      .register("nri.pkg.api.v1beta1.Runtime", {
        RegisterPlugin: {
          kind: "unary",
          handler: () => {
            setImmediate(() => void typed.configure({}).then(() => typed.synchronize({})).then(() => gotPlugin(raw)));
            return new Uint8Array(0);
          },
        },
        ...runtime,
      })
      .serve(mux.open(RUNTIME_SERVICE_CONN));
  });
  cleanup.push(() => server.close());
  return { path, plugin };
}

async function startPlugin(path: string, handlers: PluginHandlers = {}): Promise<NriPlugin> {
  const p = new NriPlugin(handlers, { socketPath: path, idx: "10", name: "p", env: {} });
  cleanup.push(() => p.close());
  await p.start();
  return p;
}

describe("errors through the endpoints keep their meaning", () => {
  it("a plugin's RpcError reaches the runtime's caller with Go's text and its code, teardown or not", async () => {
    const path = socketPath();
    const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "0" });
    await rt.start();
    cleanup.push(() => void rt.stop());
    await startPlugin(path, {
      stopContainer: () => {
        throw new RpcError(Code.NOT_FOUND, "no such container");
      },
      createContainer: () => {
        throw new RpcError(Code.PERMISSION_DENIED, "not on my node");
      },
    });
    await rt.waitForPlugins(1);
    const stopped = (await caught(rt.stopContainer({ pod, container }))) as EventError;
    expect([stopped.name, stopped.code, stopped.plugin, stopped.message]).toEqual(["EventError", Code.NOT_FOUND, "10-p", "rpc error: code = NotFound desc = no such container"]);
    const created = (await caught(rt.createContainer({ pod, container }))) as EventError;
    expect([created.name, created.code, created.message]).toEqual(["EventError", Code.PERMISSION_DENIED, "rpc error: code = PermissionDenied desc = not on my node"]);
  });

  it("a refused registration keeps the runtime's code", async () => {
    const { path } = await rawRuntime({
      RegisterPlugin: {
        kind: "unary",
        handler: () => {
          throw new RpcError(Code.PERMISSION_DENIED, "no plugins today");
        },
      },
    });
    const p = new NriPlugin({}, { socketPath: path, idx: "10", name: "p", env: {} });
    const e = (await caught(p.start())) as NriCallError;
    expect([e.name, e.code, e.message]).toEqual(["NriCallError", Code.PERMISSION_DENIED, "nri: plugin 10-p: registration failed: permission_denied: no plugins today"]);
  });

  it("updateContainers never throws a raw TypeError or RangeError: every failure names the plugin, the call and the message", async () => {
    let answer: Uint8Array | RpcError = new Uint8Array(0);
    const { path } = await rawRuntime({
      UpdateContainers: {
        kind: "unary",
        handler: () => {
          if (answer instanceof RpcError) throw answer;
          return answer;
        },
      },
    });
    const p = await startPlugin(path);
    const cases: [Uint8Array | RpcError, unknown[], string, string][] = [
      [Uint8Array.of(0x0a, 0x05, 0x41), [], "DecodeError", "nri: plugin 10-p: UpdateContainers: invalid_argument: decode nri.pkg.api.v1beta1.UpdateContainersResponse: field failed (1): length 5 exceeds remaining 1"],
      [Uint8Array.of(0x0a, 0x03, 0x0a, 0x01, 0xff), [], "DecodeError", "nri: plugin 10-p: UpdateContainers: invalid_argument: decode nri.pkg.api.v1beta1.ContainerUpdate: field container_id (1): invalid UTF-8"],
      [Uint8Array.of(0x0f), [], "DecodeError", "nri: plugin 10-p: UpdateContainers: invalid_argument: decode nri.pkg.api.v1beta1.UpdateContainersResponse: field failed (1): invalid wire type 7"],
      [
        new Uint8Array(0),
        [{ containerId: "c", linux: { resources: { memory: { limit: { value: "abc" } } } } }],
        "SyntaxError",
        "nri: plugin 10-p: UpdateContainers: invalid_argument: cannot encode nri.pkg.api.v1beta1.UpdateContainersRequest: Cannot convert abc to a BigInt",
      ],
    ];
    for (const [reply, update, causeName, message] of cases) {
      answer = reply;
      const e = (await caught(p.updateContainers(update as never))) as NriCallError;
      expect([e.name, e.code, e.message, ((e.cause as Error).cause as Error).constructor.name]).toEqual(["NriCallError", Code.INVALID_ARGUMENT, message, causeName]);
    }
    answer = new RpcError(Code.FAILED_PRECONDITION, "busy");
    const e = (await caught(p.updateContainers([{ containerId: "c" }]))) as NriCallError;
    expect([e.code, e.message]).toEqual([Code.FAILED_PRECONDITION, "nri: plugin 10-p: UpdateContainers: failed_precondition: busy"]);
    answer = Uint8Array.of(0x0a, 0x03, 0x0a, 0x01, 0x78);
    expect((await p.updateContainers([])).map((u) => u.containerId)).toEqual(["x"]);
  });

  it("a request the plugin cannot decode, or an answer it cannot encode, is answered with the message named", async () => {
    const { path, plugin } = await rawRuntime();
    await startPlugin(path, { createContainer: () => ({ update: [{ containerId: "c", linux: { resources: { memory: { limit: { value: 1.5 } } } } }] }) as never });
    const raw = await plugin;
    const call = async (method: string, payload: Uint8Array): Promise<[number, string]> => {
      const e = (await caught(raw.call("nri.pkg.api.v1beta1.Plugin", method, payload))) as RpcError;
      return [e.code, e.rawMessage];
    };
    expect(await call("StopContainer", Uint8Array.of(0x0a, 0x05, 0x41))).toEqual([Code.INVALID_ARGUMENT, "decode nri.pkg.api.v1beta1.StopContainerRequest: field pod (1): length 5 exceeds remaining 1"]);
    expect(await call("StopContainer", Uint8Array.of(0x12, 0x03, 0x0a, 0x01, 0xff))).toEqual([
      Code.INVALID_ARGUMENT,
      "decode nri.pkg.api.v1beta1.Container: field id (1): invalid UTF-8",
    ]);
    expect(await call("CreateContainer", new Uint8Array(0))).toEqual([
      Code.INTERNAL,
      "cannot encode nri.pkg.api.v1beta1.CreateContainerResponse: nri: update[0].linux.resources.memory.limit.value: 1.5 is not an integer",
    ]);
  });
});
