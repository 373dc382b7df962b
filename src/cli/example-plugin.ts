import { NriPlugin, type PluginDialect, type PluginHandlers } from "../nri/plugin.js";

/** Options of the example plugin. */
export interface ExamplePluginOptions {
  /** Default: the inherited NRI_PLUGIN_SOCKET fd, else /var/run/nri/nri.sock. */
  socketPath?: string;
  name?: string;
  idx?: string;
  dialect?: PluginDialect;
  /** Where each JSON line goes (default stdout). */
  print?: (line: string) => void;
}

interface PodAndContainer {
  pod?: { id: string } | undefined;
  container?: { id: string } | undefined;
}

/**
 * The example plugin: subscribes to every event, prints one JSON line per event received,
 * answers CreateContainer with an annotation and an environment variable and UpdateContainer
 * with CPU shares 512. Resolves with the close reason once the runtime goes away or shuts it down.
 */
export async function runExamplePlugin(o: ExamplePluginOptions): Promise<Error> {
  const print = o.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  let id = "";
  const say = (event: string, extra: Record<string, unknown> = {}): void => print(JSON.stringify({ plugin: id, event, ...extra }));
  const seen = (event: string) => (req: PodAndContainer) => {
    say(event, { pod: req.pod?.id ?? "", container: req.container?.id ?? "" });
  };
  const handlers: PluginHandlers = {
    configure: (req) => {
      say("Configure", { runtime: req.runtimeName, nriVersion: req.NRIVersion });
      return undefined;
    },
    synchronize: (req) => {
      say("Synchronize", { pods: req.pods.length, containers: req.containers.length });
      return undefined;
    },
    shutdown: (req) => {
      // The runtime closes the connection next; closing here could cut off this very answer,
      // which is still queued when the handler returns.
      say("Shutdown", { reason: req.reason });
      return undefined;
    },
    runPodSandbox: seen("RunPodSandbox"),
    updatePodSandbox: seen("UpdatePodSandbox"),
    postUpdatePodSandbox: seen("PostUpdatePodSandbox"),
    stopPodSandbox: seen("StopPodSandbox"),
    removePodSandbox: seen("RemovePodSandbox"),
    createContainer: (req) => {
      seen("CreateContainer")(req);
      return { adjust: { annotations: { "nri-wire/seen": "true" }, env: [{ key: "NRI_WIRE_SEEN", value: "true" }] } };
    },
    postCreateContainer: seen("PostCreateContainer"),
    startContainer: seen("StartContainer"),
    postStartContainer: seen("PostStartContainer"),
    updateContainer: (req) => {
      seen("UpdateContainer")(req);
      return { update: [{ containerId: req.container?.id ?? "", linux: { resources: { cpu: { shares: { value: 512n } } } } }] };
    },
    postUpdateContainer: seen("PostUpdateContainer"),
    stopContainer: seen("StopContainer"),
    removeContainer: seen("RemoveContainer"),
    validateContainerAdjustment: seen("ValidateContainerAdjustment"),
  };
  const plugin = new NriPlugin(handlers, {
    ...(o.socketPath === undefined ? {} : { socketPath: o.socketPath }),
    ...(o.name === undefined ? {} : { name: o.name }),
    ...(o.idx === undefined ? {} : { idx: o.idx }),
    dialect: o.dialect ?? "v1beta1",
  });
  id = plugin.id;
  await plugin.start();
  return plugin.closed;
}
