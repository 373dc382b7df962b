import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NriRuntime } from "../../src/runtime/index.js";
import { pluginMain } from "../../src/ship/plugin-main.js";
import { parsePort, startOperations } from "../../src/ship/operations.js";
import { freePort, socketPath } from "../support/socket.js";
import { eventually } from "../support/wait.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const f of cleanup.splice(0).reverse()) await f();
});


const pod = { id: "pod-1" };
const container = { id: "ctr-1", podSandboxId: "pod-1" };

/**
 * The built executable's main, run in this process against a runtime with `args`; resolves once
 * it is registered, with what it wrote to stderr so far and a way to stop it (SIGTERM).
 */
async function running(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ runtime: NriRuntime; path: string; err: () => string; stop: () => Promise<number> }> {
  const path = socketPath();
  const runtime = new NriRuntime({ name: "rt", version: "1", socketPath: path, pluginPath: `${path}.none`, log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
  await runtime.start();
  cleanup.push(() => runtime.stop());
  let err = "";
  vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
  const entry = { default: { createContainer: () => ({ adjust: { annotations: { seen: "1" } } }), runPodSandbox: () => Promise.reject(new Error("no")) } };
  const exited = pluginMain(() => Promise.resolve(entry), { name: "ops", idx: "10" }, ["--socket", path, ...args], env);
  await runtime.waitForPlugins(1);
  const stop = async (): Promise<number> => {
    process.emit("SIGTERM");
    return exited;
  };
  cleanup.push(() => stop());
  return { runtime, path, err: () => err, stop };
}

/**
 * `running` with the metrics server on a free port; a port another process took between
 * freePort() and the plugin's listen is tried again with another one.
 */
async function runningWithMetrics(args: (port: number) => string[], env: (port: number) => NodeJS.ProcessEnv = () => ({})): Promise<Awaited<ReturnType<typeof running>> & { port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const r = await running(args(port), env(port));
    if (!r.err().includes("(EADDRINUSE)") || attempt === 5) return { ...r, port };
    await r.stop();
    vi.restoreAllMocks();
  }
}

describe("a built plugin's operations", () => {
  it("serves /metrics on the port given, with the plugin's calls; other paths are 404", async () => {
    const { runtime, stop, port } = await runningWithMetrics((port) => ["--metrics-port", String(port), "--metrics-address", "127.0.0.1"]);
    await runtime.createContainer({ pod, container });
    await expect(runtime.runPodSandbox({ pod })).rejects.toThrow("no");
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/plain; version=0.0.4; charset=utf-8"]);
    const text = await res.text();
    expect(text).toContain('nri_plugin_events_total{plugin="10-ops",method="CreateContainer",outcome="success"} 1');
    expect(text).toContain('nri_plugin_events_total{plugin="10-ops",method="RunPodSandbox",outcome="unknown"} 1');
    expect(text).toContain('nri_plugin_connected{plugin="10-ops"} 1');
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);
    expect(await stop()).toBe(0);
  });

  it("takes the port from NRI_WIRE_METRICS_PORT and writes JSON lines at the level asked", async () => {
    const { runtime, path, err, stop, port } = await runningWithMetrics(
      () => ["--log-format", "json"],
      (port) => ({ NRI_WIRE_METRICS_PORT: String(port), NRI_WIRE_METRICS_ADDRESS: "127.0.0.1", NRI_WIRE_LOG_LEVEL: "info" }),
    );
    await expect(runtime.runPodSandbox({ pod })).rejects.toThrow("no");
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await stop();
    const lines = err()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(lines.map((l) => [l.level, l.msg?.split("\n")[0], l.plugin])).toEqual([
      ["info", `registered with rt 1 on ${path}`, "10-ops"],
      ["error", "nri: plugin 10-ops: RunPodSandbox failed: no", "10-ops"],
      ["info", "SIGTERM: stopping", "10-ops"],
      ["info", "connection closed: stopped by SIGTERM", "10-ops"],
    ]);
    expect(lines[1]).toMatchObject({ event: "RunPodSandbox", pod: "pod-1" });
  });

  it("bad input is one line each, and the plugin serves events", async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    cleanup.push(() => new Promise((r) => busy.close(r)));
    const inUse = (busy.address() as { port: number }).port;
    for (const [args, line] of [
      [["--metrics-port", "http"], '10-ops: metrics: port "http" is not a port number (1 to 65535); not serving metrics'],
      [["--metrics-port", "70000"], '10-ops: metrics: port "70000" is not a port number (1 to 65535); not serving metrics'],
      [["--metrics-port", String(inUse), "--metrics-address", "127.0.0.1"], `10-ops: metrics: cannot listen on 127.0.0.1:${inUse}: the port is in use (EADDRINUSE); not serving metrics`],
      [["--log-level", "verbose"], '10-ops: log level "verbose" is not "info", "warn" or "error"; logging at warn'],
      [["--log-format", "yaml"], '10-ops: log format "yaml" is not "text" or "json"; logging text'],
      [["--trace-endpoint", "jaeger:4318"], '10-ops: traces: endpoint "jaeger:4318" is not an http(s) URL (protocol jaeger: is not http: or https:); not sending traces'],
      [["--trace-endpoint", "http://127.0.0.1:1", "--trace-sampling", "half"], '10-ops: traces: sampling rate "half" is not a number from 0 to 1; sampling every trace'],
    ] as const) {
      const { runtime, err, stop } = await running([...args]);
      const res = await runtime.createContainer({ pod, container });
      expect(res.adjust?.annotations).toEqual({ seen: "1" });
      expect(err().split("\n")[0]).toBe(line);
      await stop();
      vi.restoreAllMocks();
    }
  });

  it("an endpoint that refuses: one line once the spans cannot be sent, and events go on", async () => {
    // Port 1 (tcpmux) has no listener, and no other test can take it as it can a freed port.
    const refused = 1;
    const { runtime, err, stop } = await running(["--trace-endpoint", `http://127.0.0.1:${refused}`]);
    await runtime.createContainer({ pod, container });
    await eventually(() => err().includes("traces: cannot send"), "the export to fail");
    await runtime.createContainer({ pod, container: { ...container, id: "ctr-2" } });
    const lines = err().split("\n").filter((l) => l.includes("traces:"));
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatch(new RegExp(`^10-ops: traces: cannot send spans to http://127\\.0\\.0\\.1:${refused}/: .*ECONNREFUSED.*; dropping spans until it answers$`, "u"));
    await stop();
  });

  it("reads a port as an integer from 1 to 65535", () => {
    expect(["1", "65535", "9464", "0", "65536", "-1", "1.5", "0x10", " 80", ""].map(parsePort)).toEqual([1, 65535, 9464, undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it("without any flag, sets nothing up", async () => {
    const ops = await startOperations({}, {}, "10-ops", () => undefined);
    expect(Object.keys(ops.plugin)).toEqual(["log"]);
    await ops.close();
  });
});
