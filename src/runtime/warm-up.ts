import { type Duplex, duplexPair } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { ALL_EVENTS, eventsToMask } from "../api/events.js";
import { packages } from "../api/revision.js";
import { sampleRequest } from "../api/sample-events.js";
import { pluginService, runtimeService } from "../api/services.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { Client } from "../ttrpc/client.js";
import { type RawMethod, Server } from "../ttrpc/server.js";
import type { EventMethod } from "./runtime-plugin.js";

/*
 * The runtime side of the warm-up (plugin/warm-up.ts has the why): once started, a runtime relays
 * sample events (api/sample-events.ts), a pod's whole life in each round, through its own relay
 * and merge code to a sample plugin on an in-memory connection, on a private runtime of its own:
 * the real one's plugins, registry and callbacks never see them. One event per turn of the
 * event loop, so a real event that arrives meanwhile is relayed at once.
 */

/** Events the warm-up relays in all: enough for V8 to optimize the code they share. */
export const WARM_UP_EVENTS = 1200;

/** A pod's life: the order of a warm-up round. */
const ROUND: readonly EventMethod[] = [
  "runPodSandbox",
  "createContainer",
  "postCreateContainer",
  "startContainer",
  "postStartContainer",
  "updateContainer",
  "postUpdateContainer",
  "updatePodSandbox",
  "postUpdatePodSandbox",
  "stopContainer",
  "removeContainer",
  "stopPodSandbox",
  "removePodSandbox",
];

const EMPTY = new Uint8Array(0);

/**
 * The sample plugin on `end`: registers as `00-warm-up` (v1beta1), subscribes
 * to every event and answers CreateContainer with an adjustment (one annotation, one environment
 * variable) and every other call with an empty message. Returns its mux, to close it.
 */
export function serveSamplePlugin(end: Duplex): Mux {
  const mux = new Mux(end);
  const answer = pluginService.createContainer.output.encode(
    pluginService.createContainer.output.create({ adjust: { annotations: { "warm-up.nri-wire.io/sample": "1" }, env: [{ key: "NRI_WIRE_WARM_UP", value: "1" }] } }),
  );
  const configured = pluginService.configure.output.encode(pluginService.configure.output.create({ events: eventsToMask(ALL_EVENTS) }));
  const methods: Record<string, RawMethod> = {};
  for (const m of Object.values(pluginService)) {
    const bytes = m === pluginService.createContainer ? answer : m === pluginService.configure ? configured : EMPTY;
    methods[m.name] = { kind: "unary", handler: () => bytes };
  }
  new Server().register(`${packages.v1beta1}.Plugin`, methods).serve(mux.open(PLUGIN_SERVICE_CONN));
  const register = runtimeService.registerPlugin.input;
  void new Client(mux.open(RUNTIME_SERVICE_CONN))
    .call(`${packages.v1beta1}.Runtime`, runtimeService.registerPlugin.name, register.encode(register.create({ pluginName: "warm-up", pluginIdx: "00" })))
    .catch(() => undefined);
  return mux;
}

/** What the warm-up needs: a private runtime to relay on, and whether the real one still runs. */
export interface WarmUpPeer {
  /** Takes the sample plugin's connection as the private runtime's own. */
  accept(conn: Duplex): void;
  /** Resolves once the sample plugin is registered and synchronized. */
  waitForPlugin(): Promise<void>;
  /** Relays one event on the private runtime. */
  relay(method: EventMethod, request: unknown): Promise<unknown>;
  /** Stops the private runtime. */
  stop(): Promise<void>;
  /** Whether the real runtime still runs: the warm-up stops when it does not. */
  running(): boolean;
}

/** Runs the warm-up; resolves when it is done or the runtime stopped. Never rejects. */
export async function warmUpRuntime(peer: WarmUpPeer): Promise<void> {
  const [runtimeEnd, pluginEnd] = duplexPair();
  const plugin = serveSamplePlugin(pluginEnd);
  try {
    peer.accept(runtimeEnd);
    await peer.waitForPlugin();
    const requests = new Map(ROUND.map((m) => [m, sampleRequest(pluginService[m])]));
    for (let i = 0; i < WARM_UP_EVENTS && peer.running(); i++) {
      const method = ROUND[i % ROUND.length]!;
      await peer.relay(method, requests.get(method));
      await nextTurn();
    }
  } catch {
    // The warm-up only makes later events faster: whatever stops it changes nothing else.
  } finally {
    plugin.close();
    await peer.stop().catch(() => undefined);
  }
}
