import type { Duplex } from "node:stream";
import { type DescMessage, type JsonValue, type Message, type MessageInitShape, create, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import {
  type ContainerUpdate,
  Plugin,
  RegisterPluginRequestSchema,
  type UpdateContainersRequest,
  UpdateContainersRequestSchema,
  UpdateContainersResponseSchema,
} from "../../gen/v1beta1/api_pb.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { Client } from "../ttrpc/client.js";
import { RpcError } from "../ttrpc/errors.js";
import { Server } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import { type Dialect, DIALECTS } from "../api/revision.js";
import { type Revision, packages, responseToV1beta1, stateChangeEventOf, toV1alpha1 } from "../translate/index.js";


/** The service the runner's calls are written for, before any translation for a v1alpha1 plugin. */
const BETA_PLUGIN = `${packages.v1beta1}.Plugin`;

type PluginMethods = (typeof Plugin)["method"];
/** A v1beta1 Plugin method, by its local name (`createContainer`). */
export type PluginMethodName = keyof PluginMethods;

/** What a plugin said in RegisterPlugin. */
export interface Registration {
  readonly name: string;
  readonly idx: string;
  readonly version: Revision;
  /** Milliseconds from the connection to the registration. */
  readonly ms: number;
}

/** One call the runner made, as it went on the wire and as it came back. */
export interface CallRecord {
  /** The v1beta1 method name (`RunPodSandbox`). */
  readonly method: string;
  /** What was sent: `nri.pkg.api.v1alpha1.Plugin/StateChange` and the like. */
  readonly wire: string;
  readonly request: JsonValue;
  readonly ms: number;
  /** The response decoded as the v1beta1 response type. */
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

/**
 * The runtime's end of one plugin connection, as the conformance runner drives it: the Runtime
 * service on conn 2 (under the packages its dialect serves) and calls on conn 1 made in v1beta1
 * terms and sent as the dialect sends them. Every call is recorded whole, failures included;
 * nothing is merged or refused here: judging is the suite's job.
 */
export class ScriptedConnection {
  readonly mux: Mux;
  readonly registered: Promise<Registration>;
  readonly unsolicited: UnsolicitedUpdate[] = [];
  /** Whether the nine old events go as StateChange (always in the statechange dialect). */
  stateChange: boolean;
  /** Set once the plugin has answered Shutdown. */
  shutdownAnswered = false;
  private registration: Registration | undefined;
  private readonly client: Client;
  private readonly started = performance.now();
  private lastMethod = "";
  private readonly deprecated = new Set<string>();

  constructor(
    socket: Duplex,
    private readonly options: ScriptedConnectionOptions,
  ) {
    this.stateChange = options.dialect === "statechange";
    this.mux = new Mux(socket);
    this.client = new Client(this.mux.open(PLUGIN_SERVICE_CONN));
    let settle!: (r: Registration) => void;
    this.registered = new Promise((r) => (settle = r));
    const server = new Server();
    const versions: Revision[] = options.dialect === "v1beta1" ? ["v1beta1", "v1alpha1"] : ["v1alpha1"];
    for (const version of versions) {
      server.register(`${packages[version]}.Runtime`, {
        RegisterPlugin: {
          kind: "unary",
          handler: (payload) => {
            const req = fromBinary(RegisterPluginRequestSchema, payload);
            if (this.registration === undefined) {
              this.registration = { name: req.pluginName, idx: req.pluginIdx, version, ms: performance.now() - this.started };
              settle(this.registration);
            }
            return new Uint8Array(0);
          },
        },
        UpdateContainers: {
          kind: "unary",
          handler: (payload) => {
            const request = fromBinary(UpdateContainersRequestSchema, payload);
            this.unsolicited.push({ request, after: this.lastMethod, afterShutdown: this.shutdownAnswered });
            const failed = this.options.onUpdateContainers?.(request) ?? [];
            return toBinary(UpdateContainersResponseSchema, create(UpdateContainersResponseSchema, { failed }));
          },
        },
      });
    }
    server.serve(this.mux.open(RUNTIME_SERVICE_CONN));
  }

  /** The revision the plugin registered with (v1beta1 until it has). */
  get version(): Revision {
    return this.registration?.version ?? "v1beta1";
  }

  /** Calls a Plugin method; never throws: the outcome is in the record. */
  async call<K extends PluginMethodName>(method: K, request: MessageInitShape<PluginMethods[K]["input"]>, timeoutMs: number): Promise<CallRecord> {
    const desc = Plugin.method[method];
    const message = create(desc.input, request as never);
    const payload = toBinary(desc.input, message);
    const requestJson = toJson(desc.input, message);
    this.lastMethod = desc.name;
    const t0 = performance.now();
    let wire = "";
    try {
      let bytes: Uint8Array;
      for (;;) {
        const out = this.wireCall(desc.name, payload);
        wire = `${out.service}/${out.method}`;
        try {
          bytes = await this.client.call(out.service, out.method, out.payload, { timeoutMs });
        } catch (e) {
          // A dedicated-era runtime switches the plugin to StateChange on its first UNIMPLEMENTED.
          const fallBack = this.version === "v1alpha1" && !this.stateChange && stateChangeEventOf(desc.name) !== undefined && e instanceof RpcError && e.code === Code.UNIMPLEMENTED;
          if (!fallBack) throw e;
          this.stateChange = true;
          continue;
        }
        break;
      }
      if (wire.endsWith("/StateChange") && this.options.dialect !== "statechange" && !this.deprecated.has(desc.name)) {
        this.deprecated.add(desc.name);
        this.options.onDeprecation?.(desc.name);
      }
      const beta = this.version === "v1beta1" ? bytes : responseToV1beta1({ service: BETA_PLUGIN, method: desc.name }, bytes).payload;
      return { method: desc.name, wire, request: requestJson, ms: performance.now() - t0, ...decode(desc.output, beta) };
    } catch (e) {
      return { method: desc.name, wire, request: requestJson, ms: performance.now() - t0, error: e as Error };
    } finally {
      if (desc.name === "Shutdown") this.shutdownAnswered = true;
    }
  }

  private wireCall(method: string, payload: Uint8Array): { service: string; method: string; payload: Uint8Array } {
    const call = { service: BETA_PLUGIN, method, payload };
    if (this.version === "v1beta1") return call;
    return toV1alpha1(call, this.stateChange && stateChangeEventOf(method) !== undefined ? "statechange" : "dedicated");
  }

  /** Closes the connection (a runtime going away). */
  close(reason: Error = new Error("nri: runtime closed the connection")): void {
    this.mux.close(reason);
  }
}

/** A response decoded, with its JSON and the numbers of fields its type does not have. */
function decode(schema: DescMessage, bytes: Uint8Array): Pick<CallRecord, "response" | "responseJson" | "unknownFields" | "error"> {
  try {
    const response = fromBinary(schema, bytes);
    const unknown = (response as { $unknown?: { no: number }[] }).$unknown;
    return {
      response,
      responseJson: toJson(schema, response),
      ...(unknown !== undefined && unknown.length > 0 ? { unknownFields: unknown.map((u) => u.no) } : {}),
    };
  } catch (e) {
    return { error: new Error(`invalid ${schema.typeName}: ${(e as Error).message}`) };
  }
}
