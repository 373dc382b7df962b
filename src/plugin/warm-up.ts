import { type Duplex, duplexPair } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { eventBit, eventOfMethod } from "../api/events.js";
import type { PluginHandlers } from "../api/handlers.js";
import { type Revision, packages } from "../api/revision.js";
import { sampleRequest } from "../api/sample-events.js";
import { Mux, PLUGIN_SERVICE_CONN } from "../mux/mux.js";
import { encodeMuxFrames } from "../mux/trunk-frame.js";
import { encodeRequest } from "../ttrpc/envelope.js";
import { MessageType, encodeFrame } from "../ttrpc/frame.js";
import { loadedTranslation, pluginMethods } from "./methods.js";

/*
 * A fresh process runs its code in V8's interpreter and baseline compiler until each function has
 * been called a few hundred times; a plugin whose events come a few a minute would serve its first
 * hundreds of events that way (3 to 5 times slower than optimized, docs/performance.md). So once
 * registered, a plugin serves sample requests (api/sample-events.ts) of the events it subscribed
 * to through its own serving path (mux, ttrpc, the revision's translation, decoding, encoding the
 * answer) over an in-memory connection, with handlers of its own, never the user's. The requests
 * are written as the bytes a runtime sends, so that only the plugin's side of the connection runs:
 * no client code is compiled that the plugin would not otherwise run. One call per turn of the
 * event loop: a real event that arrives meanwhile is served at once.
 */

/** Calls the warm-up makes, spread over the subscribed events: enough for V8 to optimize the code they share. */
export const WARM_UP_CALLS = 1200;

/** The handlers the warm-up calls: CreateContainer answers with an adjustment, so that encoding one is warm too. */
export const WARM_UP_HANDLERS: PluginHandlers = {
  createContainer: () => ({ adjust: { annotations: { "warm-up.nri-wire.io/sample": "1" }, env: [{ key: "NRI_WIRE_WARM_UP", value: "1" }] } }),
};

/** What the warm-up needs of the plugin. */
export interface WarmUpTarget {
  /** Serves the Plugin service on `conn` as the plugin does, with WARM_UP_HANDLERS. */
  serve(conn: Duplex): void;
  /** The event mask the plugin subscribed to. */
  readonly events: number;
  /** The revision its runtime speaks: the calls come in that revision. */
  readonly revision: Revision;
  /** Whether the plugin's own connection is still open: the warm-up stops when it is not. */
  open(): boolean;
}

/** The calls a runtime of `revision` makes for each event of `events`, with the sample requests. */
function sampleCalls(events: number, revision: Revision): { service: string; method: string; payload: Uint8Array }[] {
  const service = `${packages.v1beta1}.Plugin`;
  const calls = [];
  for (const [name, method] of pluginMethods) {
    const event = eventOfMethod(name);
    if (event === undefined || (events & eventBit(event)) === 0) continue;
    const call = { service, method: name, payload: method.input.encode(sampleRequest(method) as never) };
    if (revision === "v1beta1") calls.push(call);
    else {
      // A v1alpha1 runtime's plugin has translation loaded: it was needed to register.
      const t = loadedTranslation();
      if (t !== undefined) calls.push(t.toV1alpha1(call, "dedicated"));
    }
  }
  return calls;
}

/** Runs the warm-up; resolves when it is done or the plugin's connection ended. Never rejects. */
export async function warmUp(target: WarmUpTarget): Promise<void> {
  const calls = sampleCalls(target.events, target.revision).map((c) => encodeRequest({ ...c, timeoutNano: 0, metadata: [] }));
  if (calls.length === 0) return;
  const [runtimeEnd, pluginEnd] = duplexPair();
  const plugin = new Mux(pluginEnd);
  let answered: (() => void) | undefined;
  runtimeEnd.on("data", () => answered?.());
  void plugin.closed.then(() => answered?.());
  try {
    target.serve(plugin.open(PLUGIN_SERVICE_CONN));
    for (let i = 0; i < WARM_UP_CALLS && target.open() && !plugin.closeReason; i++) {
      // Each answer is one small frame: its first bytes are the whole of it.
      const answer = new Promise<void>((resolve) => (answered = resolve));
      runtimeEnd.write(encodeMuxFrames(PLUGIN_SERVICE_CONN, encodeFrame(2 * i + 1, MessageType.Request, 0, calls[i % calls.length]!)));
      await answer;
      await nextTurn();
    }
  } catch {
    // The warm-up only makes later events faster: whatever stops it changes nothing else.
  } finally {
    plugin.close();
    runtimeEnd.destroy();
  }
}
