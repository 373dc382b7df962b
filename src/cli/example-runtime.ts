import { type MessageInitShape, create } from "@bufbuild/protobuf";
import { ContainerSchema, ContainerState, type ContainerUpdate, PodSandboxSchema } from "../../gen/v1beta1/api_pb.js";
import { type EventMethod, NriRuntime, type PluginHandle } from "../nri/runtime.js";
import { stateChangeEventOf } from "../translate/index.js";
import { type Command, UsageError } from "./command.js";

/** Options of the example runtime. */
export interface ExampleRuntimeOptions {
  socketPath: string;
  plugins?: number;
  print?: (line: string) => void;
}

const syncPod: MessageInitShape<typeof PodSandboxSchema> = { id: "pod0", name: "sync-pod", uid: "uid-pod0", namespace: "default" };
const syncCtr: MessageInitShape<typeof ContainerSchema> = { id: "ctr0", podSandboxId: "pod0", name: "sync-ctr", state: ContainerState.CONTAINER_RUNNING };
const pod: MessageInitShape<typeof PodSandboxSchema> = { id: "pod1", name: "demo-pod", uid: "uid-pod1", namespace: "default", labels: { app: "demo" } };
const ctr: MessageInitShape<typeof ContainerSchema> = {
  id: "ctr1",
  podSandboxId: "pod1",
  name: "demo-ctr",
  state: ContainerState.CONTAINER_CREATED,
  args: ["sleep", "inf"],
  env: ["A=1"],
};

/** The script, in order: each event with its request. */
const script: [EventMethod, Record<string, unknown>][] = [
  ["runPodSandbox", { pod }],
  ["createContainer", { pod, container: ctr }],
  ["postCreateContainer", { pod, container: ctr }],
  ["startContainer", { pod, container: ctr }],
  ["postStartContainer", { pod, container: ctr }],
  ["updateContainer", { pod, container: ctr, linuxResources: {} }],
  ["postUpdateContainer", { pod, container: ctr }],
  ["stopContainer", { pod, container: ctr }],
  ["removeContainer", { pod, container: ctr }],
  ["updatePodSandbox", { pod, overheadLinuxResources: {}, linuxResources: {} }],
  ["postUpdatePodSandbox", { pod }],
  ["stopPodSandbox", { pod }],
  ["removePodSandbox", { pod }],
];

function updatesOf(list: ContainerUpdate[]): { container: string; cpu_shares?: number }[] {
  return list.map((u) => {
    const shares = u.linux?.resources?.cpu?.shares?.value;
    return shares === undefined ? { container: u.containerId } : { container: u.containerId, cpu_shares: Number(shares) };
  });
}

/** How a plugin received a call: its revision, and StateChange where it got that. */
function via(plugin: PluginHandle, method: string): string {
  if (plugin.version === "v1beta1") return "v1beta1";
  return plugin.stateChange && stateChangeEventOf(method) !== undefined ? "v1alpha1 StateChange" : "v1alpha1";
}

/**
 * The example runtime: waits for plugins, synchronizes them with one pod and one container,
 * drives the 13-event script on another pod and container, prints one JSON line per event and
 * then the deprecations. Resolves with the exit code.
 */
export async function runExampleRuntime(o: ExampleRuntimeOptions): Promise<number> {
  const print = o.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const runtime = new NriRuntime({
    socketPath: o.socketPath,
    name: "nri-wire-example-runtime",
    version: "v0.1.0",
    requestTimeoutMs: 3000,
    synchronize: () => ({ pods: [create(PodSandboxSchema, syncPod)], containers: [create(ContainerSchema, syncCtr)] }),
    onUpdateContainers: () => [],
  });
  await runtime.start();
  print(JSON.stringify({ ready: true }));
  let code = 0;
  try {
    await runtime.waitForPlugins(o.plugins ?? 1, 20_000);
    for (const [method, request] of script) {
      const name = method.charAt(0).toUpperCase() + method.slice(1);
      try {
        const results = await runtime.dispatch(method, request as never);
        const failed = results.find((r) => r.error !== undefined);
        const result: Record<string, unknown> = {};
        if (method === "createContainer") {
          const annotations: Record<string, string> = {};
          const env: string[] = [];
          for (const r of results) {
            const adjust = (r.response as { adjust?: { annotations: Record<string, string>; env: { key: string; value: string }[] } } | undefined)?.adjust;
            Object.assign(annotations, adjust?.annotations ?? {});
            for (const kv of adjust?.env ?? []) env.push(`${kv.key}=${kv.value}`);
          }
          Object.assign(result, { annotations, env });
          const adjust = { annotations, env: env.map((e) => ({ key: e.split("=")[0]!, value: e.slice(e.indexOf("=") + 1) })) };
          await runtime.dispatch("validateContainerAdjustment", { pod, container: ctr, adjust } as never);
        } else if (method === "updateContainer" || method === "stopContainer") {
          result.updates = results.flatMap((r) => updatesOf((r.response as { update?: ContainerUpdate[] } | undefined)?.update ?? []));
        }
        const line: Record<string, unknown> = { event: name, ok: failed === undefined };
        if (failed !== undefined) line.error = failed.error!.message;
        line.result = result;
        line.plugins = results.map((r) => ({ plugin: r.plugin.id, via: via(r.plugin, name), ok: r.error === undefined }));
        print(JSON.stringify(line));
        if (failed !== undefined) code = 1;
      } catch (e) {
        print(JSON.stringify({ event: name, ok: false, error: (e as Error).message, result: {} }));
        code = 1;
      }
    }
    print(JSON.stringify({ deprecations: runtime.deprecations.map((d) => d.message) }));
    await runtime.shutdown("example runtime finished its script");
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    code = 1;
  } finally {
    runtime.close();
  }
  return code;
}

/** `nri-wire example-runtime`. */
export const exampleRuntimeCommand: Command = {
  name: "example-runtime",
  summary: "Run the example runtime: wait for plugins, drive 13 events, print each result as a JSON line.",
  description: "Exits 0 when every event succeeded, 1 otherwise.",
  options: {
    socket: { type: "string", value: "PATH", description: "where to listen", required: true },
    plugins: { type: "string", value: "N", description: "how many plugins to wait for (default 1)" },
  },
  async run(v) {
    if (v.socket === undefined) throw new UsageError("nri-wire example-runtime: --socket is required");
    const plugins = Number(v.plugins ?? "1");
    if (!Number.isSafeInteger(plugins) || plugins < 1) throw new UsageError(`nri-wire example-runtime: --plugins ${String(v.plugins)} is not a positive integer`);
    return runExampleRuntime({ socketPath: v.socket as string, plugins });
  },
};
