import { ALL_EVENTS, eventHandlerName, formatEvent } from "../api/events.js";
import { NriPlugin, type Dialect, type PluginHandlers } from "../plugin/index.js";
import { type Command, EXIT } from "./command.js";
import { UsageError } from "./errors.js";

/** Options of the example plugin. */
export interface ExamplePluginOptions {
  /** Default: the inherited NRI_PLUGIN_SOCKET fd, else /var/run/nri/nri.sock. */
  socketPath?: string;
  name?: string;
  idx?: string;
  dialect?: Dialect;
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
 * with CPU shares 512. Ends itself once Shutdown is answered; resolves with the close reason.
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
      say("Shutdown", { reason: req.reason });
      // end(), not close(): the answer to this call is written first, then the connection ends.
      void plugin.stop(new Error(`nri-wire example-plugin: shut down by the runtime${req.reason === "" ? "" : `: ${req.reason}`}`));
      return undefined;
    },
    createContainer: (req) => {
      seen("CreateContainer")(req);
      return { adjust: { annotations: { "nri-wire/seen": "true" }, env: [{ key: "NRI_WIRE_SEEN", value: "true" }] } };
    },
    updateContainer: (req) => {
      seen("UpdateContainer")(req);
      return { update: [{ containerId: req.container?.id ?? "", linux: { resources: { cpu: { shares: { value: 512n } } } } }] };
    },
  };
  // Every other event is printed and answered empty.
  const printed = handlers as Record<string, (req: PodAndContainer) => void>;
  for (const e of ALL_EVENTS) printed[eventHandlerName(e)] ??= seen(formatEvent(e));
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

const DIALECTS: readonly string[] = ["v1beta1", "v1alpha1", "statechange"];

/** `nri-wire example-plugin`. */
export const examplePluginCommand: Command = {
  name: "example-plugin",
  summary: "Run the example plugin: print every event as a JSON line, answer with an annotation, an env variable and CPU shares.",
  description:
    "Connects to the runtime at --socket, else the fd a launching runtime passed in NRI_PLUGIN_SOCKET,\nelse /var/run/nri/nri.sock. Exits 0 when the runtime closes the connection or shuts it down.",
  options: {
    socket: { type: "string", value: "PATH", description: "the runtime's NRI socket" },
    name: { type: "string", value: "NAME", description: "plugin name (default NRI_PLUGIN_NAME, else peer-plugin)" },
    idx: { type: "string", value: "NN", description: "two-digit plugin index (default NRI_PLUGIN_IDX, else 10)" },
    dialect: { type: "string", value: "D", description: "v1beta1 (default), v1alpha1, or statechange: behave like a plugin of that era" },
  },
  async run(v) {
    const dialect = (v.dialect as string | undefined) ?? "v1beta1";
    if (!DIALECTS.includes(dialect)) throw new UsageError(`nri-wire example-plugin: unknown dialect "${dialect}": use v1beta1, v1alpha1 or statechange`);
    const reason = await runExamplePlugin({
      ...(v.socket === undefined ? {} : { socketPath: v.socket as string }),
      // Identity: flags, then what a launching runtime set, then the peers' defaults.
      name: (v.name as string | undefined) ?? process.env.NRI_PLUGIN_NAME ?? "peer-plugin",
      idx: (v.idx as string | undefined) ?? process.env.NRI_PLUGIN_IDX ?? "10",
      dialect: dialect as Dialect,
    });
    process.stderr.write(`${reason.message}\n`);
    return EXIT.ok;
  },
};
