/**
 * What a built plugin executable runs (`nri-wire build` bundles it with the entry). Three modes:
 *
 *   NN-NAME [--socket PATH] [--config FILE] [--state DIR] [--name NAME] [--idx NN]
 *       run the plugin: on the fd a runtime hands it (NRI_PLUGIN_SOCKET, pre-installed) until
 *       that connection ends (the runtime relaunches it), else on the socket (default
 *       /var/run/nri/nri.sock), reconnecting whenever the runtime goes away and comes back
 *   NN-NAME probe [--state DIR]   exit 0 when the running plugin is registered (readiness)
 *   NN-NAME check                 exit 0 when the entry exports a plugin; prints its events
 *
 * Every message is one `NN-NAME: ...` line on stderr: a pod's log, a unit's journal.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { formatEventMask } from "../events.js";
import { type CallContext } from "../ttrpc/server.js";
import { NriPlugin, type PluginHandlers, eventsOf } from "../nri/plugin-endpoint.js";
import { resolveIdentity } from "../nri/identity.js";
import { DEFAULT_SOCKET_PATH } from "../nri/socket.js";
import { pluginHandlersOf } from "./plugin-entry.js";
import { markRegistered, markUnregistered, probe, stateFile } from "./readiness.js";
import { socketProblem } from "./socket-check.js";

/** What `nri-wire build` fixes at build time. */
export interface BakedIdentity {
  readonly name: string;
  readonly idx: string;
}

/** Delays between reconnection attempts: doubling from the first to the last. */
const RETRY_MS = { first: 100, last: 2000 } as const;

/** Runs the executable's mode from argv; resolves with the exit code. */
export async function launch(entry: Readonly<Record<string, unknown>>, baked: BakedIdentity, argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const id = `${env.NRI_PLUGIN_IDX ?? baked.idx}-${env.NRI_PLUGIN_NAME ?? baked.name}`;
  const say = (line: string): void => {
    process.stderr.write(`${id}: ${line}\n`);
  };
  const [mode, ...rest] = argv;
  try {
    if (mode === "check") {
      const handlers = pluginHandlersOf(entry);
      process.stdout.write(`${JSON.stringify({ id, events: formatEventMask(eventsOf(handlers)), handlers: Object.keys(handlers) })}\n`);
      return 0;
    }
    if (mode === "probe") {
      const { values } = parseArgs({ args: rest, options: { state: { type: "string", default: "/run/nri-wire" } }, strict: true });
      const verdict = probe(stateFile(values.state));
      say(verdict.line);
      return verdict.ready ? 0 : 1;
    }
    const { values } = parseArgs({
      args: [...argv],
      options: { socket: { type: "string" }, config: { type: "string" }, state: { type: "string" }, name: { type: "string" }, idx: { type: "string" } },
      strict: true,
    });
    const identity = resolveIdentity({ name: values.name ?? env.NRI_PLUGIN_NAME ?? baked.name, idx: values.idx ?? env.NRI_PLUGIN_IDX ?? baked.idx });
    return await serve(pluginHandlersOf(entry), { ...identity, socket: values.socket, config: values.config, state: values.state, env, say });
  } catch (e) {
    say((e as Error).message);
    return 1;
  }
}

interface ServeOptions extends BakedIdentity {
  socket: string | undefined;
  config: string | undefined;
  state: string | undefined;
  env: NodeJS.ProcessEnv;
  say: (line: string) => void;
}

/**
 * Runs the plugin. Launched by a runtime (an inherited fd): once; the runtime launches it again
 * when it needs it. On a socket: refuses to start while the socket is unusable, then connects
 * again each time the connection ends, waiting for the socket to come back.
 */
async function serve(user: PluginHandlers, o: ServeOptions): Promise<number> {
  const launched = o.socket === undefined && (o.env.NRI_PLUGIN_SOCKET ?? "") !== "";
  const socketPath = o.socket ?? DEFAULT_SOCKET_PATH;
  const state = o.state === undefined ? undefined : stateFile(o.state);
  // A file left by an earlier run of this container says nothing about this one.
  if (state !== undefined) markUnregistered(state);
  const handlers = withConfigFile(user, o.config);
  if (!launched) {
    const problem = socketProblem(socketPath);
    if (problem !== undefined) throw new Error(`cannot start: ${problem}`);
  }
  let delay: number = RETRY_MS.first;
  for (;;) {
    const plugin = new NriPlugin(handlers, {
      name: o.name,
      idx: o.idx,
      ...(launched ? {} : { socketPath }),
      env: o.env,
      log: (level, message) => {
        if (level !== "info") o.say(message);
      },
    });
    try {
      await plugin.start();
      const rt = plugin.runtime;
      const runtime = rt === undefined ? "the runtime" : `${rt.name} ${rt.version}`;
      if (state !== undefined) markRegistered(state, runtime);
      o.say(`registered with ${runtime} on ${launched ? `fd ${o.env.NRI_PLUGIN_SOCKET!}` : socketPath}`);
      delay = RETRY_MS.first;
      const reason = await plugin.closed;
      if (state !== undefined) markUnregistered(state);
      o.say(`connection closed: ${reason.message}`);
    } catch (e) {
      if (state !== undefined) markUnregistered(state);
      if (launched) throw e;
      o.say(`${(e as Error).message}; retrying in ${delay} ms`);
    }
    if (launched) return 0;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, RETRY_MS.last);
  }
}

/**
 * The handlers with Configure given the config file's text when the runtime sends no config (a
 * runtime configures only the plugins it launches; a DaemonSet's plugin reads its ConfigMap). The
 * file is read at every Configure, so a reconnection picks up a changed file.
 */
function withConfigFile(handlers: PluginHandlers, file: string | undefined): PluginHandlers {
  if (file === undefined) return handlers;
  const configure = handlers.configure;
  return {
    ...handlers,
    configure: (req, ctx: CallContext) => {
      if (req.config === "") {
        try {
          req.config = readFileSync(file, "utf8");
        } catch (e) {
          throw new Error(`config file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
        }
      }
      return configure?.(req, ctx);
    },
  };
}
