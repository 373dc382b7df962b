/**
 * What a built plugin executable runs (`nri-wire build` bundles it with the entry). Three modes:
 *
 *   NN-NAME [--socket PATH] [--config FILE] [--state DIR] [--name NAME] [--idx NN]
 *           [--metrics-port PORT] [--metrics-address ADDR] [--log-format text|json] [--log-level LEVEL]
 *           [--trace-endpoint URL] [--trace-sampling RATE]
 *       run the plugin: on the fd a runtime hands it (NRI_PLUGIN_SOCKET, pre-installed) until
 *       that connection ends (the runtime relaunches it), else on the socket (default
 *       /var/run/nri/nri.sock), reconnecting whenever the runtime goes away and comes back;
 *       metrics, traces and JSON logs as operations.ts says
 *   NN-NAME probe [--state DIR]   exit 0 when the running plugin is registered (readiness)
 *   NN-NAME check                 exit 0 when the entry exports a plugin; prints its events
 *
 * Every message is one `NN-NAME: ...` line on stderr: a pod's log, a unit's journal.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { formatEventMask } from "../api/events.js";
import { type HandlerContext, type PluginHandlers, eventsOf } from "../api/handlers.js";
import { resolveIdentity } from "../api/identity.js";
import { DEFAULT_SOCKET_PATH } from "../api/socket.js";
import { NriPlugin } from "../plugin/plugin.js";
import { errorText } from "../internal/error-text.js";
import { pluginHandlersOf } from "./plugin-entry.js";
import { markRegistered, markUnregistered, stateFile } from "./readiness.js";
import { type BakedIdentity, failureLine, lineId, probeMain } from "./probe-main.js";
import { socketProblem } from "./socket-check.js";
import { OPERATIONS_ARGS, type Operations, startOperations } from "./operations.js";

/**
 * Delays between reconnection attempts: the first after a connection ends (or a first failure),
 * then doubling after each failure up to the last.
 */
export const RETRY_MS = { first: 100, last: 2000 } as const;

/**
 * Runs the executable's mode from argv; resolves with the exit code. Every mode but `probe` loads
 * the entry first: an entry that fails to load (its top-level code threw) is reported with its
 * stack and then one `NN-NAME: cannot load the entry: MESSAGE` line.
 */
export async function pluginMain(loadEntry: () => Promise<Readonly<Record<string, unknown>>>, baked: BakedIdentity, argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [mode, ...rest] = argv;
  // A probe is no run of the plugin: its entry is not loaded (probe-main.ts). Its line goes
  // through process.stderr like every other line here; the bundle's own probe path writes to fd 2.
  if (mode === "probe") return probeMain(baked, rest, env, (text) => process.stderr.write(text));
  // The identity messages carry: the one given, once the command line is read.
  let id = lineId(baked, env);
  const say = (line: string): void => {
    process.stderr.write(`${id}: ${line}\n`);
  };
  let entry: Readonly<Record<string, unknown>>;
  try {
    entry = await loadEntry();
  } catch (e) {
    if (e instanceof Error && e.stack !== undefined) process.stderr.write(`${e.stack}\n`);
    say(`cannot load the entry: ${errorText(e)}`);
    return 1;
  }
  try {
    if (mode === "check") {
      const handlers = pluginHandlersOf(entry);
      process.stdout.write(`${JSON.stringify({ id, events: formatEventMask(eventsOf(handlers)), handlers: Object.keys(handlers) })}\n`);
      return 0;
    }
    const { values } = parseArgs({
      args: [...argv],
      options: { socket: { type: "string" }, config: { type: "string" }, state: { type: "string" }, name: { type: "string" }, idx: { type: "string" }, ...OPERATIONS_ARGS },
      strict: true,
    });
    const identity = resolveIdentity({ name: values.name ?? env.NRI_PLUGIN_NAME ?? baked.name, idx: values.idx ?? env.NRI_PLUGIN_IDX ?? baked.idx });
    id = `${identity.idx}-${identity.name}`;
    const handlers = pluginHandlersOf(entry);
    // Metrics, traces and JSON logs, when asked for (operations.ts).
    const ops = await startOperations(values, env, id, say);
    try {
      return await serve(handlers, { ...identity, socket: values.socket, config: values.config, state: values.state, env, say: ops.say, ops });
    } finally {
      await ops.close();
    }
  } catch (e) {
    say(failureLine(e));
    return 1;
  }
}

interface ServeOptions extends BakedIdentity {
  socket: string | undefined;
  config: string | undefined;
  state: string | undefined;
  env: NodeJS.ProcessEnv;
  say: (line: string) => void;
  ops: Operations;
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
  if (state !== undefined) {
    try {
      mkdirSync(o.state!, { recursive: true });
      // A file left by an earlier run of this container says nothing about this one.
      markUnregistered(state);
    } catch (e) {
      throw new Error(`cannot start: state directory ${o.state!}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
    }
  }
  const handlers = withConfigFile(user, o.config);
  if (!launched) {
    const problem = socketProblem(socketPath);
    if (problem !== undefined) throw new Error(`cannot start: ${problem}`);
  }
  let delay: number = RETRY_MS.first;
  // SIGTERM (the pod deleted, the unit stopped) ends the plugin cleanly: the runtime sees its
  // connection close, the readiness file goes, and the process exits 0 instead of being killed.
  let current: NriPlugin | undefined;
  let wake: (() => void) | undefined;
  let terminated = false;
  const onTerm = (): void => {
    terminated = true;
    o.say("SIGTERM: stopping");
    void current?.stop(new Error("stopped by SIGTERM"));
    wake?.();
  };
  process.once("SIGTERM", onTerm);
  try {
    return await runUntilTerminated();
  } finally {
    process.off("SIGTERM", onTerm);
  }

  async function runUntilTerminated(): Promise<number> {
  for (;;) {
    if (terminated) return 0;
    const plugin = new NriPlugin(handlers, {
      name: o.name,
      idx: o.idx,
      ...(launched ? {} : { socketPath }),
      env: o.env,
      ...o.ops.plugin,
    });
    current = plugin;
    let registered = false;
    try {
      await plugin.start();
      registered = true;
    } catch (e) {
      if (terminated) return 0;
      if (launched) throw e;
      o.say(`${(e as Error).message}; retrying in ${delay} ms`);
    }
    if (registered) {
      const rt = plugin.runtime;
      const runtime = rt === undefined ? "the runtime" : `${rt.name} ${rt.version}`;
      // Readiness that cannot be recorded is a fault of the pod's setup, not the runtime's: stop.
      if (state !== undefined) markRegistered(state, runtime);
      o.say(`registered with ${runtime} on ${launched ? `fd ${o.env.NRI_PLUGIN_SOCKET!}` : socketPath}`);
      delay = RETRY_MS.first;
      const reason = await plugin.closed;
      if (state !== undefined) markUnregistered(state);
      o.say(`connection closed: ${reason.message}`);
    }
    current = undefined;
    if (launched || terminated) return 0;
    await new Promise<void>((r) => {
      const timer = setTimeout(r, delay);
      wake = () => {
        clearTimeout(timer);
        r();
      };
    });
    wake = undefined;
    delay = Math.min(delay * 2, RETRY_MS.last);
  }
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
    configure: (req, ctx: HandlerContext) => {
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
