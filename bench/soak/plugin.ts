/**
 * A plugin process of the soak, on NriPlugin. Every role answers every lifecycle event, after a
 * random delay of up to `--jitter-ms` (so that kills land inside calls), and prints `ready` once
 * registered, configured and synchronized; it exits when the runtime closes the connection.
 * `node --import tsx plugin.ts --socket PATH --idx NN --name NAME --role ROLE --seed N [--jitter-ms N]`
 *
 * The roles (roles.ts): `annotator` adds an annotation and an environment variable on
 * CreateContainer; `updater` sets the memory limit on UpdateContainer and, after each
 * PostStartContainer, asks for an unsolicited CPU quota update; `validator` rejects containers
 * named `reject-me`.
 */
import { NriPlugin, type PluginHandlers } from "../../src/plugin/index.js";
import { flag } from "../nri/args.js";
import { Rng } from "./rng.js";
import { REJECTED_NAME, REJECTION_REASON, UPDATER_CPU_QUOTA, UPDATER_MEMORY_LIMIT, annotationOf, envOf } from "./roles.js";

const name = flag("name", "soak");
const role = flag("role", "annotator");
const jitterMs = Number(flag("jitter-ms", "0"));
const rng = new Rng(Number(flag("seed", "1")));

/** Wraps every handler in a random delay. */
function jittered(handlers: PluginHandlers): PluginHandlers {
  if (jitterMs <= 0) return handlers;
  const out: Record<string, unknown> = {};
  for (const [key, h] of Object.entries(handlers)) {
    const handler = h as (req: unknown, ctx: unknown) => unknown;
    out[key] = async (req: unknown, ctx: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, rng.int(0, jitterMs)));
      return handler(req, ctx);
    };
  }
  return out as PluginHandlers;
}

const ack = (): undefined => undefined;
const lifecycle: PluginHandlers = {
  runPodSandbox: ack,
  updatePodSandbox: ack,
  postUpdatePodSandbox: ack,
  stopPodSandbox: ack,
  removePodSandbox: ack,
  createContainer: ack,
  postCreateContainer: ack,
  startContainer: ack,
  postStartContainer: ack,
  updateContainer: ack,
  postUpdateContainer: ack,
  stopContainer: ack,
  removeContainer: ack,
};

let plugin: NriPlugin | undefined;

function roleHandlers(): PluginHandlers {
  switch (role) {
    case "annotator":
      return {
        ...lifecycle,
        createContainer: () => ({
          adjust: {
            annotations: { [annotationOf(name)]: "1" },
            env: [{ key: envOf(name), value: "1" }],
          },
        }),
      };
    case "updater":
      return {
        ...lifecycle,
        updateContainer: (req) => ({ update: [{ containerId: req.container?.id ?? "", linux: { resources: { memory: { limit: UPDATER_MEMORY_LIMIT } } } }] }),
        postStartContainer: (req) => {
          const id = req.container?.id ?? "";
          // Sent after the answer, never awaited inside a handler: the runtime may hold a lock.
          setImmediate(() => {
            plugin?.updateContainers([{ containerId: id, linux: { resources: { cpu: { quota: UPDATER_CPU_QUOTA } } } }]).catch(() => undefined);
          });
        },
      };
    case "validator":
      return {
        ...lifecycle,
        validateContainerAdjustment: (req) =>
          req.container?.name === REJECTED_NAME ? { reject: true, reason: REJECTION_REASON } : { reject: false },
      };
    default:
      throw new Error(`soak: unknown plugin role ${role}`);
  }
}

plugin = new NriPlugin(jittered(roleHandlers()), { name, idx: flag("idx", "10"), socketPath: flag("socket", "") });
await plugin.start();
process.stdout.write("ready\n");
const reason = await plugin.closed;
process.stderr.write(`soak plugin ${plugin.id}: ${reason.message}\n`);
process.exit(0);
