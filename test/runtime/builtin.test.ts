import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { CreateContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { NriPlugin } from "../../src/plugin/index.js";
import { type BuiltinPlugin, type Deprecation, NriRuntime, eventsOf } from "../../src/runtime/index.js";
import { LogRecorder, cleanups, runCleanups, startRuntime } from "../support/nri-runtime.js";
import { exactly } from "../support/errors.js";
import { goText } from "../support/go-texts.js";
import { tempDir } from "../support/temp.js";

afterEach(runCleanups);

const pod = { id: "pod0" };
const container = { id: "ctr0", podSandboxId: "pod0" };

async function inProcess(builtinPlugins: BuiltinPlugin[], extra: Partial<ConstructorParameters<typeof NriRuntime>[0]> = {}): Promise<{ runtime: NriRuntime; logs: LogRecorder }> {
  const logs = new LogRecorder();
  const runtime = new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath: tempDir(), builtinPlugins, log: logs.log, ...extra });
  cleanups.push(() => runtime.stop());
  await runtime.start();
  return { runtime, logs };
}

describe("builtin plugins", () => {
  it("subscribe to the events they have handlers for and take part in index order", async () => {
    const seen: string[] = [];
    const { runtime } = await inProcess([
      { idx: "20", name: "b", handlers: { createContainer: () => (seen.push("20-b"), { adjust: { env: [{ key: "B", value: "1" }] } }) } },
      { idx: "10", name: "a", handlers: { createContainer: () => (seen.push("10-a"), { adjust: { annotations: { a: "1" } } }), stopPodSandbox: () => undefined } },
    ]);
    expect(runtime.plugins.map((p) => [p.id, p.kind, p.events])).toEqual([
      ["10-a", "builtin", (1 << 3) | (1 << 1)],
      ["20-b", "builtin", 1 << 3],
    ]);
    expect(eventsOf({ validateContainerAdjustment: () => undefined })).toBe(1 << 13);
    const res = await runtime.createContainer({ pod, container });
    expect(seen).toEqual(["10-a", "20-b"]);
    expect(res.adjust?.annotations).toEqual({ a: "1" });
    expect(res.adjust?.env.map((kv) => `${kv.key}=${kv.value}`)).toEqual(["B=1"]);
  });

  it("adjusts a copy: the request message a caller passes is left as it was", async () => {
    const { runtime } = await inProcess([{ idx: "10", name: "a", handlers: { createContainer: () => ({ adjust: { annotations: { a: "1" }, env: [{ key: "A", value: "1" }] } }) } }]);
    const request = create(CreateContainerRequestSchema, { pod, container: { ...container, annotations: { x: "0" } } });
    const before = toBinary(CreateContainerRequestSchema, request);
    const res = await runtime.createContainer(request);
    expect(res.adjust?.annotations).toEqual({ a: "1" });
    expect(toBinary(CreateContainerRequestSchema, request)).toEqual(before);
    expect(request.container?.linux).toBeUndefined();
  });

  it("a builtin validator rejects by throwing; its message is the reason", async () => {
    const { runtime } = await inProcess([
      {
        idx: "05",
        name: "v",
        handlers: {
          validateContainerAdjustment: (req) => {
            if (req.plugins.length > 0) throw new Error(`no plugins allowed, saw ${req.plugins.map((p) => `${p.index}-${p.name}`).join(",")}`);
          },
        },
      },
    ]);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(exactly(goText("event: a validator rejected", { "80-v1": "05-v", "no way": "no plugins allowed, saw 05-v" })));
  });

  it("the default validator is installed first, as 00-default-validator, when enabled", async () => {
    const { runtime } = await inProcess(
      [{ idx: "10", name: "hooks", handlers: { createContainer: () => ({ adjust: { hooks: { prestart: [{ path: "/bin/true" }] } } }) } }],
      { defaultValidator: { enable: true, rejectOCIHookAdjustment: true } },
    );
    expect(runtime.plugins.map((p) => p.id)).toEqual(["00-default-validator", "10-hooks"]);
    await expect(runtime.createContainer({ pod, container })).rejects.toThrow(exactly(goText("event: the default validator refused an OCI hook", { "10-a": "10-hooks" })));
  });

  it("a builtin without index or name fails the runtime's start with the reference's text", async () => {
    const rt = new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath: tempDir(), builtinPlugins: [{ idx: "", name: "x", handlers: {} }] });
    await expect(rt.start()).rejects.toThrow('failed to initialize builtin NRI plugin "x": builtin plugin without index or name ("", "x")');
  });

  it("a builtin whose handler key names no event is refused when the runtime is made, with the nearest name", () => {
    const builtinPlugins = [{ idx: "10", name: "typo", handlers: { createContainr: () => undefined } as BuiltinPlugin["handlers"] }];
    expect(() => new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath: tempDir(), builtinPlugins })).toThrow(
      new TypeError('nri: builtin plugin 10-typo: unknown handler "createContainr": did you mean "createContainer"?'),
    );
  });

  it("upstream: a builtin is not raced against the request timeout; rejecting with its signal's reason counts as timing out", async () => {
    let calls = 0;
    const { runtime, logs } = await inProcess(
      [
        {
          // Named as in the differential scenario "failure-policy-other-events", for Go's text.
          idx: "10",
          name: "keep",
          handlers: {
            runPodSandbox: (_req, ctx) => {
              calls++;
              return new Promise<void>((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason as Error), { once: true }));
            },
          },
        },
      ],
      { requestTimeoutMs: 50 },
    );
    await runtime.runPodSandbox({ pod });
    expect(logs.at("warn")).toContain(goText("warn: a plugin timed out on RunPodSandbox, proceeding"));
    // A builtin is marked closed and dropped like any other plugin.
    expect(runtime.plugins).toEqual([]);
    expect(calls).toBe(1);
  });

  it("a synchronize function runs at start even with no pre-installed plugin, and a failure fails the start", async () => {
    let calls = 0;
    await inProcess([], { synchronize: async (sync) => void (calls++, await sync([], [])) });
    expect(calls).toBe(1);
    const rt = new NriRuntime({
      name: "t",
      version: "0",
      socketPath: false,
      pluginPath: tempDir(),
      synchronize: () => {
        throw new Error("state unavailable");
      },
    });
    await expect(rt.start()).rejects.toThrow(exactly(goText("start: the synchronize callback failed")));
  });
});

describe("deprecations", () => {
  it("records a StateChange-era plugin once per event, as containerd records it", async () => {
    const recorded: Deprecation[] = [];
    const { runtime, socket } = await startRuntime({ onDeprecation: (d) => recorded.push(d) });
    const plugin = new NriPlugin({ runPodSandbox: () => undefined, startContainer: () => undefined }, { socketPath: socket, idx: "10", name: "old", env: {}, dialect: "statechange" });
    cleanups.push(() => plugin.close());
    await plugin.start();
    await runtime.waitForPlugins(1);
    await runtime.runPodSandbox({ pod });
    await runtime.runPodSandbox({ pod });
    await runtime.startContainer({ pod, container });
    const expected = ["RunPodSandbox", "StartContainer"].map((event) => ({
      plugin: "10-old",
      event,
      deprecated: "StateChange",
      message: "NRI plugin uses a deprecated interface.",
      detail: `does not implement a dedicated ${event} RPC call`,
    }));
    expect(recorded).toEqual(expected);
    expect(runtime.deprecations).toEqual(expected);
    expect(runtime.plugins[0]?.stateChange).toBe(true);
  });
});
