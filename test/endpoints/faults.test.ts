import { once } from "node:events";
import { type Socket, connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Mux, RUNTIME_SERVICE_CONN } from "../../src/mux/mux.js";
import { NriCallError } from "../../src/api/errors.js";
import { NriPlugin } from "../../src/plugin/index.js";
import { NriRuntime, type Logger } from "../../src/runtime/index.js";
import { Client } from "../../src/ttrpc/client.js";
import { ClosedError, RpcError } from "../../src/ttrpc/errors.js";
import { Code } from "../../src/ttrpc/status.js";
import { Rng } from "../../scripts/fuzz/rng.js";
import { seed } from "../support/fc.js";
import { socketPath } from "../support/socket.js";
import { eventually } from "../support/wait.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

const pod = { id: "pod1" };

async function runtime(path: string, extra: Partial<ConstructorParameters<typeof NriRuntime>[0]> = {}): Promise<NriRuntime> {
  const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "0", registrationTimeoutMs: 2000, ...extra });
  await rt.start();
  cleanup.push(() => void rt.stop());
  return rt;
}

/** A runtime log keeping its error lines. */
function errorLog(lines: string[]): Logger {
  return { info: () => undefined, warn: () => undefined, error: (m) => lines.push(m) };
}

async function raw(path: string): Promise<Socket> {
  const s = connect(path);
  await once(s, "connect");
  cleanup.push(() => s.destroy());
  return s;
}

describe("runtime and plugin faults over real sockets", () => {
  it("garbage on the runtime socket instead of a registration does not stop the next good plugin", async () => {
    const path = socketPath();
    const closed: string[] = [];
    const rt = await runtime(path, { log: errorLog(closed) });
    const rng = new Rng(seed >>> 0);
    // Random bytes: the first mux header announces some length and the rest is noise.
    const noise = await raw(path);
    noise.write(rng.bytes(64 * 1024));
    // A mux header announcing a frame over the limit.
    const huge = await raw(path);
    huge.write(Uint8Array.of(0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff));
    // Half a mux header, then the connection ends.
    const half = await raw(path);
    half.end(Uint8Array.of(0, 0, 0));
    // A well-framed RegisterPlugin whose request does not decode.
    const framed = await raw(path);
    const mux = new Mux(framed);
    const e = await new Client(mux.open(RUNTIME_SERVICE_CONN)).call("nri.pkg.api.v1beta1.Runtime", "RegisterPlugin", Uint8Array.of(0x0a, 0x05, 0x41)).catch((x: unknown) => x as RpcError);
    expect([e instanceof RpcError && e.code, (e as RpcError).rawMessage]).toEqual([Code.INVALID_ARGUMENT, "decode nri.pkg.api.v1beta1.RegisterPluginRequest: field plugin_name (1): length 5 exceeds remaining 1"]);
    mux.close();

    const got: string[] = [];
    const good = new NriPlugin({ runPodSandbox: (req) => void got.push(req.pod?.id ?? "") }, { socketPath: path, idx: "10", name: "good", env: {} });
    cleanup.push(() => good.close());
    await good.start();
    await rt.waitForPlugins(1);
    await rt.runPodSandbox({ pod });
    expect([rt.plugins.map((p) => p.id), got]).toEqual([["10-good"], ["pod1"]]);
    for (const s of [noise, huge]) s.destroy();
    await eventually(() => closed.length >= 4, "every garbage connection to be closed");
    // As the Go runtime logs it: the connection went away before it registered.
    expect(closed).toEqual(Array(4).fill("failed to start external plugin: failed to register plugin, connection closed"));
  });

  it("a runtime restart is seen by a plugin as by the Go stub: its close path runs once, with the reason, and pending calls fail", async () => {
    const path = socketPath();
    let release!: () => void;
    const stuck = new Promise<[]>((r) => (release = () => r([])));
    const first = await runtime(path, { updateContainers: () => stuck });
    const reasons: Error[] = [];
    const plugin = new NriPlugin({}, { socketPath: path, idx: "10", name: "p", env: {}, onClose: (r) => reasons.push(r) });
    cleanup.push(() => plugin.close());
    await plugin.start();
    await first.waitForPlugins(1);
    const pending = plugin.updateContainers([{ containerId: "c" }]).catch((x: unknown) => x as Error);
    const t0 = performance.now();
    void first.stop();
    const reason = await plugin.closed;
    const e = (await pending) as NriCallError;
    const ms = performance.now() - t0;
    release();
    expect(reason).toBeInstanceOf(ClosedError);
    expect(reason.message).toMatch(/^mux: trunk closed by peer(: (write|read) (EPIPE|ECONNRESET))?$/);
    expect(reasons).toEqual([reason]);
    expect([e.name, e.code, e.message]).toEqual(["NriCallError", Code.UNAVAILABLE, `nri: plugin 10-p: UpdateContainers: unavailable: connection closed: ${reason.message}`]);
    console.log(`runtime restart: the plugin's onClose ran once with "${reason.message}", its pending call failed ${ms.toFixed(1)} ms after the runtime closed`);

    // The restarted runtime takes the path over, and a plugin started again registers with it.
    const second = await runtime(path);
    const again = new NriPlugin({ runPodSandbox: () => undefined }, { socketPath: path, idx: "10", name: "p", env: {} });
    cleanup.push(() => again.close());
    await again.start();
    await second.waitForPlugins(1);
    expect(second.plugins.map((p) => p.id)).toEqual(["10-p"]);
    await second.runPodSandbox({ pod });
    expect(reasons).toHaveLength(1);
  });
});
