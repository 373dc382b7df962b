import { create } from "@bufbuild/protobuf";
import { ContainerSchema, type ContainerUpdate, PodSandboxSchema } from "../../gen/v1beta1/api_pb.js";
import { NriRuntime, type PluginInfo } from "../runtime/index.js";
import { scriptContainer, scriptPod, syncContainer, syncPod } from "../testing/script-objects.js";
import { stateChangeEventOf } from "../translate/index.js";
import { type Command } from "./command.js";
import { UsageError } from "./errors.js";
import { nriWireVersion } from "../internal/nri-wire-version.js";

/** Options of the example runtime. */
export interface ExampleRuntimeOptions {
  socketPath: string;
  plugins?: number;
  print?: (line: string) => void;
}

const pod = scriptPod("demo");
const container = scriptContainer("demo");

function updatesOf(list: readonly (ContainerUpdate | undefined)[]): { container: string; cpu_shares?: number }[] {
  // UpdateContainer's list ends with the target's own entry, absent when no plugin updated it.
  return list.flatMap((u) => {
    if (u === undefined) return [];
    const shares = u.linux?.resources?.cpu?.shares?.value;
    return [shares === undefined ? { container: u.containerId } : { container: u.containerId, cpu_shares: Number(shares) }];
  });
}

/** How a plugin received an event: its revision, and StateChange where it got that. */
function via(plugin: PluginInfo, event: string): string {
  if (plugin.revision !== "v1alpha1") return plugin.revision ?? "builtin";
  return plugin.stateChange && stateChangeEventOf(event) !== undefined ? "v1alpha1 StateChange" : "v1alpha1";
}

/** The script of test/interop/PEERS.md: each event and what its line's `result` shows. */
function script(rt: NriRuntime): [string, () => Promise<object>][] {
  const empty = async (p: Promise<unknown>): Promise<object> => (await p, {});
  return [
    ["RunPodSandbox", () => empty(rt.runPodSandbox({ pod }))],
    [
      "CreateContainer",
      async () => {
        const adjust = (await rt.createContainer({ pod, container })).adjust;
        return { annotations: adjust?.annotations ?? {}, env: (adjust?.env ?? []).map((kv) => `${kv.key}=${kv.value}`) };
      },
    ],
    ["PostCreateContainer", () => empty(rt.postCreateContainer({ pod, container }))],
    ["StartContainer", () => empty(rt.startContainer({ pod, container }))],
    ["PostStartContainer", () => empty(rt.postStartContainer({ pod, container }))],
    ["UpdateContainer", async () => ({ updates: updatesOf((await rt.updateContainer({ pod, container, linuxResources: {} })).update) })],
    ["PostUpdateContainer", () => empty(rt.postUpdateContainer({ pod, container }))],
    ["StopContainer", async () => ({ updates: updatesOf((await rt.stopContainer({ pod, container })).update) })],
    ["RemoveContainer", () => empty(rt.removeContainer({ pod, container }))],
    ["UpdatePodSandbox", () => empty(rt.updatePodSandbox({ pod, overheadLinuxResources: {}, linuxResources: {} }))],
    ["PostUpdatePodSandbox", () => empty(rt.postUpdatePodSandbox({ pod }))],
    ["StopPodSandbox", () => empty(rt.stopPodSandbox({ pod }))],
    ["RemovePodSandbox", () => empty(rt.removePodSandbox({ pod }))],
  ];
}

/**
 * The example runtime: waits for plugins, synchronizes them with one pod and one container,
 * drives the 13-event script on another pod and container, prints one JSON line per event and
 * then the deprecations. A plugin dropped during the script (a timeout, a lost connection) makes
 * its event's line `ok:false`, as the Go peer reports it. Resolves with the exit code.
 */
export async function runExampleRuntime(o: ExampleRuntimeOptions): Promise<number> {
  const print = o.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const problems: string[] = [];
  const runtime = new NriRuntime({
    socketPath: o.socketPath,
    pluginPath: "/nonexistent/nri-wire/plugins",
    pluginConfigPath: "/nonexistent/nri-wire/conf.d",
    name: "nri-wire-example-runtime",
    version: `v${nriWireVersion()}`,
    requestTimeoutMs: 3000,
    synchronize: async (sync) => {
      const updates = await sync([create(PodSandboxSchema, syncPod)], [create(ContainerSchema, syncContainer)]);
      if (updates.length > 0) process.stderr.write(`plugin asked for ${updates.length} container updates while synchronizing\n`);
    },
    updateContainers: () => [],
    // As the Go peer does: error-level messages and a plugin's connection closing are problems.
    log: {
      info: (m) => {
        if (/^connection to plugin .* closed$/u.test(m)) problems.push(m);
        process.stderr.write(`info: ${m}\n`);
      },
      warn: (m) => process.stderr.write(`warn: ${m}\n`),
      error: (m) => {
        problems.push(m);
        process.stderr.write(`error: ${m}\n`);
      },
    },
  });
  await runtime.start();
  print(JSON.stringify({ ready: true }));
  let code = 0;
  try {
    await runtime.waitForPlugins(o.plugins ?? 1, 20_000);
    for (const [event, run] of script(runtime)) {
      const plugins = runtime.plugins.filter((p) => !p.closed);
      problems.length = 0;
      const line: Record<string, unknown> = { event, ok: true };
      try {
        line.result = await run();
        if (problems.length > 0) Object.assign(line, { ok: false, error: problems.join("; ") });
      } catch (e) {
        Object.assign(line, { ok: false, error: (e as Error).message, result: {} });
      }
      // After the event: a StateChange-era plugin is known as one once it has answered UNIMPLEMENTED.
      line.plugins = plugins.map((p) => ({ plugin: p.id, via: via(p, event) }));
      if (line.ok !== true) code = 1;
      print(JSON.stringify(line));
    }
    print(JSON.stringify({ deprecations: runtime.deprecations.map((d) => ({ plugin: d.plugin, deprecated: d.deprecated, detail: d.detail })) }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    code = 1;
  } finally {
    await runtime.stop("example runtime finished its script");
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
