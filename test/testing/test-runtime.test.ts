import { toJson } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { CreateContainerResponseSchema, UpdateContainerResponseSchema } from "../../gen/v1beta1/api_pb.js";
import { NriPlugin, type PluginHandlers } from "../../src/plugin/index.js";
import { TestRuntime } from "../../src/testing/index.js";

const pod = { id: "pod1", name: "p", uid: "u1", namespace: "default" };
const ctr = { id: "ctr1", podSandboxId: "pod1", name: "c", env: ["KEEP=1"] };

describe("TestRuntime", () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function start(...plugins: [string, string, PluginHandlers, ("v1beta1" | "statechange")?][]): Promise<TestRuntime> {
    const runtime = await TestRuntime.start({ containers: [{ id: "ctr0", podSandboxId: "pod0", name: "old" }] });
    cleanup.push(() => runtime.close());
    for (const [idx, name, handlers, dialect] of plugins) {
      const plugin = new NriPlugin(handlers, { socketPath: runtime.socketPath, name, idx, dialect: dialect ?? "v1beta1" });
      cleanup.push(() => plugin.close());
      await plugin.start();
    }
    await runtime.waitForPlugins(plugins.length);
    return runtime;
  }

  it("merges two plugins' CreateContainer answers as the Go runtime does, empty parts included", async () => {
    const runtime = await start(
      ["10", "a", { createContainer: () => ({ adjust: { annotations: { a: "1" }, env: [{ key: "A", value: "1" }] } }) }],
      ["20", "b", { createContainer: (req) => ({ adjust: { annotations: { b: String(req.container?.env.length) }, env: [{ key: "B", value: "2" }] } }) }],
    );
    const merged = await runtime.createContainer(pod, ctr);
    // Plugin b sees the container as a adjusted it: two environment entries.
    expect(toJson(CreateContainerResponseSchema, merged)).toEqual({
      adjust: {
        annotations: { a: "1", b: "2" },
        env: [
          { key: "A", value: "1" },
          { key: "B", value: "2" },
        ],
        hooks: {},
        linux: { resources: { memory: {}, cpu: {} } },
      },
    });
  });

  it("rejects a conflict with the Go runtime's text, naming the later plugin first", async () => {
    const runtime = await start(
      ["10", "a", { createContainer: () => ({ adjust: { annotations: { same: "a" } } }) }],
      ["20", "b", { createContainer: () => ({ adjust: { annotations: { same: "b" } } }) }],
    );
    await expect(runtime.createContainer(pod, ctr)).rejects.toThrow('plugins "20-b" and "10-a" both tried to set Annotations same');
  });

  it("merges UpdateContainer answers with the target last, records unsolicited updates, and deprecations of old plugins", async () => {
    let plugin!: NriPlugin;
    const runtime = await TestRuntime.start();
    cleanup.push(() => runtime.close());
    plugin = new NriPlugin(
      {
        updateContainer: (req) => ({ update: [{ containerId: req.container!.id, linux: { resources: { cpu: { shares: { value: 512n } } } } }] }),
        postStartContainer: async () => void (await plugin.updateContainers([{ containerId: "ctr1", linux: { resources: { memory: { limit: { value: 1n << 30n } } } } }])),
      },
      { socketPath: runtime.socketPath, name: "old", idx: "30", dialect: "statechange" },
    );
    cleanup.push(() => plugin.close());
    await plugin.start();
    await runtime.waitForPlugins(1);
    const res = await runtime.updateContainer(pod, ctr);
    expect(toJson(UpdateContainerResponseSchema, res)).toMatchObject({ update: [{ containerId: "ctr1", linux: { resources: { cpu: { shares: { value: "512" } } } } }] });
    await runtime.postStartContainer(pod, ctr);
    expect(runtime.updates.map((u) => [u.plugin, u.update.map((x) => x.containerId)])).toEqual([["30-old", ["ctr1"]]]);
    expect(runtime.deprecations.map((d) => [d.plugin, d.detail])).toEqual([["30-old", "does not implement a dedicated PostStartContainer RPC call"]]);
  });
});
