import type { Duplex } from "node:stream";
import type { JsonValue, Message, MessageInitShape } from "@bufbuild/protobuf";
import { toJson } from "@bufbuild/protobuf";
import { type ContainerUpdate, Plugin, type UpdateContainersRequest } from "../../gen/v1beta1/api_pb.js";
import type { Mux } from "../mux/mux.js";
import type { RpcError } from "../ttrpc/errors.js";
import type { Dialect } from "../api/revision.js";
import type { Revision } from "../translate/index.js";
import { type Registration, RuntimeConnection } from "../runtime/runtime-connection.js";
import { create, encodeInit, fromBinary } from "../api/messages.js";

type PluginMethods = (typeof Plugin)["method"];
/** A v1beta1 Plugin method, by its local name (`createContainer`). */
export type PluginMethodName = keyof PluginMethods;

/** One call the runner made, as it went on the wire and as it came back. */
export interface CallRecord {
  /** The v1beta1 method name (`RunPodSandbox`). */
  readonly method: string;
  /** What was sent: `nri.pkg.api.v1alpha1.Plugin/StateChange` and the like. */
  readonly wire: string;
  readonly request: JsonValue;
  readonly ms: number;
  /** The response decoded as the v1beta1 response type, strictly, as the runtime decodes it. */
  readonly response?: Message;
  readonly responseJson?: JsonValue;
  /** Fields of the response its type does not have (field numbers). */
  readonly unknownFields?: readonly number[];
  readonly error?: RpcError | Error;
}

/** An UpdateContainers the plugin sent on its own. */
export interface UnsolicitedUpdate {
  readonly request: UpdateContainersRequest;
  /** After which call of the script it arrived (its method), or `""` before any. */
  readonly after: string;
  /** Whether it came after the plugin had answered Shutdown. */
  readonly afterShutdown: boolean;
}

/** Options of a ScriptedConnection. */
export interface ScriptedConnectionOptions {
  dialect: Dialect;
  /** Decides which unsolicited updates fail (returned in the answer). */
  onUpdateContainers?: (request: UpdateContainersRequest) => ContainerUpdate[];
  /** Each StateChange fallback of a dedicated-era runtime, once per event. */
  onDeprecation?: (method: string) => void;
}

/** Which runtime each dialect plays, in the connection core's terms. */
const PLAYS: Record<Dialect, { serves: readonly Revision[]; stateChange: boolean }> = {
  v1beta1: { serves: ["v1beta1", "v1alpha1"], stateChange: false },
  v1alpha1: { serves: ["v1alpha1"], stateChange: false },
  statechange: { serves: ["v1alpha1"], stateChange: true },
};

/**
 * The runtime's end of one plugin connection, as the conformance runner drives it: the
 * runtime-side connection core (the one NriRuntime uses) playing the dialect's runtime, with
 * every call recorded whole, failures included. Nothing is merged here: judging is the suite's
 * job; an answer the runtime could not decode is the call's error, with the decoder's text.
 */
export class ScriptedConnection {
  readonly mux: Mux;
  /** Settles with the registration; rejects when the connection ends first. */
  readonly registered: Promise<Registration>;
  readonly unsolicited: UnsolicitedUpdate[] = [];
  /** Set once the plugin has answered Shutdown. */
  shutdownAnswered = false;
  private readonly core: RuntimeConnection;
  private lastMethod = "";

  constructor(socket: Duplex, options: ScriptedConnectionOptions) {
    const plays = PLAYS[options.dialect];
    this.core = new RuntimeConnection(socket, {
      ...plays,
      // The suite checks the name and index itself, with its own texts.
      checkIdentity: false,
      updateContainers: (request) => {
        this.unsolicited.push({ request, after: this.lastMethod, afterShutdown: this.shutdownAnswered });
        return options.onUpdateContainers?.(request) ?? [];
      },
      ...(options.onDeprecation === undefined ? {} : { deprecated: options.onDeprecation }),
    });
    this.mux = this.core.mux;
    this.registered = this.core.registered;
  }

  /** The revision the plugin registered with (v1beta1 until it has). */
  get version(): Revision {
    return this.core.revision;
  }

  /** Whether the nine old events go as StateChange (always in the statechange dialect). */
  get stateChange(): boolean {
    return this.core.stateChange;
  }

  /** Calls a Plugin method; never throws: the outcome is in the record. */
  async call<K extends PluginMethodName>(method: K, request: MessageInitShape<PluginMethods[K]["input"]>, timeoutMs: number): Promise<CallRecord> {
    const desc = Plugin.method[method];
    const message = create(desc.input, request);
    const payload = encodeInit(desc.input, message);
    const requestJson = toJson(desc.input, message);
    this.lastMethod = desc.name;
    const t0 = performance.now();
    try {
      const bytes = await this.core.call(desc.name, payload, { timeoutMs });
      const wire = this.core.wireName(desc.name);
      const ms = performance.now() - t0;
      try {
        const response = fromBinary(desc.output, bytes) as Message;
        const unknown = (response as { $unknown?: { no: number }[] }).$unknown;
        return {
          method: desc.name,
          wire,
          request: requestJson,
          ms,
          response,
          responseJson: toJson(desc.output, response as never),
          ...(unknown !== undefined && unknown.length > 0 ? { unknownFields: unknown.map((u) => u.no) } : {}),
        };
      } catch (e) {
        return { method: desc.name, wire, request: requestJson, ms, error: e as Error };
      }
    } catch (e) {
      return { method: desc.name, wire: this.core.wireName(desc.name), request: requestJson, ms: performance.now() - t0, error: e as Error };
    } finally {
      if (desc.name === "Shutdown") this.shutdownAnswered = true;
    }
  }

  /** Closes the connection (a runtime going away). */
  close(reason: Error = new Error("nri: runtime closed the connection")): void {
    this.core.close(reason);
  }
}
