import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type Logger, NriPlugin, jsonLogger } from "../../src/plugin/index.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { socketPath } from "../support/socket.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A stream that keeps every line written to it. */
function lines(): { stream: { write(line: string): boolean }; lines: string[] } {
  const out: string[] = [];
  return { stream: { write: (l: string) => (out.push(...l.split("\n").filter((x) => x !== "")), true) }, lines: out };
}

const pod = { id: "pod-1", name: "web", namespace: "default" };
const container = { id: "ctr-1", podSandboxId: "pod-1", name: "app" };

/** A runtime and a plugin whose createContainer fails, each with its logger. */
async function runtimeAndPlugin(pluginLog: Partial<Logger>, runtimeLog: Partial<Logger> = { info: () => undefined, warn: () => undefined, error: () => undefined }): Promise<NriRuntime> {
  const path = socketPath();
  const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", log: runtimeLog });
  await rt.start();
  cleanup.push(() => rt.stop());
  const p = new NriPlugin({ createContainer: () => { throw new Error("no room"); } }, { idx: "10", name: "p", env: {}, socketPath: path, log: pluginLog });
  cleanup.push(() => p.close());
  await p.start();
  await rt.waitForPlugins(1);
  return rt;
}

describe("jsonLogger", () => {
  it("writes one JSON object per line: level, time, msg and the line's fields", () => {
    const out = lines();
    const log = jsonLogger({ stream: out.stream, now: () => Date.UTC(2026, 0, 2, 3, 4, 5, 6), fields: { plugin: "10-p" } });
    log.info("registered");
    log.error("CreateContainer failed: no room", { event: "CreateContainer", pod: "pod-1", container: "ctr-1" });
    expect(out.lines).toEqual([
      '{"level":"info","time":"2026-01-02T03:04:05.006Z","msg":"registered","plugin":"10-p"}',
      '{"level":"error","time":"2026-01-02T03:04:05.006Z","msg":"CreateContainer failed: no room","plugin":"10-p","event":"CreateContainer","pod":"pod-1","container":"ctr-1"}',
    ]);
  });

  it("writes its level and above only, and refuses a level it does not know", () => {
    const out = lines();
    const log = jsonLogger({ stream: out.stream, level: "warn" });
    log.info("quiet");
    log.warn("loud");
    log.error("louder");
    expect(out.lines.map((l) => (JSON.parse(l) as { level: string }).level)).toEqual(["warn", "error"]);
    expect(() => jsonLogger({ level: "verbose" as never })).toThrow(new RangeError('nri: log level "verbose" is not "info", "warn" or "error"'));
  });

  it("as a plugin's log, carries the plugin, event, pod and container of a failed handler", async () => {
    const out = lines();
    const rt = await runtimeAndPlugin(jsonLogger({ stream: out.stream, level: "error" }));
    await expect(rt.createContainer({ pod, container })).rejects.toThrow("no room");
    const line = JSON.parse(out.lines.at(-1)!) as Record<string, string>;
    // The message ends with the handler's stack.
    expect({ ...line, time: "", msg: line.msg!.split("\n")[0] }).toEqual({ level: "error", time: "", msg: "nri: plugin 10-p: CreateContainer failed: no room", plugin: "10-p", event: "CreateContainer", pod: "pod-1", container: "ctr-1" });
  });
});

describe("pino as a Logger", () => {
  it("works unchanged for a plugin and a runtime: its methods are called on it", async () => {
    const got: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n")) if (l !== "") got.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: "info" }, sink);
    const rt = await runtimeAndPlugin(logger, logger);
    await expect(rt.createContainer({ pod, container })).rejects.toThrow("no room");
    await new Promise((r) => setImmediate(r));
    const msgs = got.map((l) => `${l.level as number} ${(l.msg as string).split("\n")[0]!}`);
    expect(msgs).toContain("50 nri: plugin 10-p: CreateContainer failed: no room");
    expect(msgs).toContain('30 plugin "10-p" connected and synchronized');
  });
});
