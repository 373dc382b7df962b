import type { Duplex } from "node:stream";
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { messages_v1alpha1_api } from "../../gen/v1alpha1/api_codec.js";
import { services_v1alpha1_api } from "../../gen/v1alpha1/api_lite.js";
import type { Runtime as AlphaRuntime } from "../../gen/v1alpha1/api_pb.js";
import { type ServiceMethods, type UnaryMethod, runtimeService, serviceMethods } from "../api/services.js";
import type { RawMethod } from "../ttrpc/server.js";
import { undecodable } from "../ttrpc/typed.js";
import { messageRegistry } from "../wire/registry.js";
import type { ContainerUpdate, RegisterPluginRequest, UpdateContainersRequest } from "../../gen/v1beta1/api_lite.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { type CallOptions, Client } from "../ttrpc/client.js";
import { RpcError } from "../ttrpc/errors.js";
import { Server } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import { type Revision, packages, responseToV1beta1, stateChangeEventOf, toV1alpha1 } from "../translate/index.js";
import { goQuote } from "../internal/go-quote.js";
import { pluginIndexError, pluginNameError } from "../api/identity.js";
import { AnswerError } from "./errors.js";

/** What a plugin said in RegisterPlugin (its name and index), and the revision of the service it said it to. */
export interface Registration {
  readonly name: string;
  readonly idx: string;
  readonly revision: Revision;
}

/** Options of a RuntimeConnection: which runtime it plays and what it does with the plugin's calls. */
export interface RuntimeConnectionOptions {
  /**
   * The revisions whose Runtime service is served. Default both (a runtime of this package);
   * `["v1alpha1"]` plays a runtime of an upstream release, where a v1beta1-only plugin cannot register.
   */
  readonly serves?: readonly Revision[];
  /**
   * Whether the nine old events go as StateChange from the first call, as a StateChange-era
   * runtime sends them. Default false: a v1alpha1 plugin is switched to StateChange on its first
   * UNIMPLEMENTED, as a dedicated-era runtime does.
   */
  readonly stateChange?: boolean;
  /** Whether the registration's name and index are checked (a plugin that connected by itself). */
  readonly checkIdentity: boolean;
  /** Busy polling of the socket, in microseconds; 0 is off. */
  readonly busyPollMicros?: number;
  /** An unsolicited UpdateContainers, decoded as v1beta1; resolves with the updates that failed. */
  updateContainers(request: UpdateContainersRequest): Promise<ContainerUpdate[]> | ContainerUpdate[];
  /**
   * A plugin switched to StateChange took `method` (`PostStartContainer`) through it, successfully:
   * once per method, as a dedicated-era runtime records a deprecation.
   */
  deprecated?(method: string): void;
}

/** The v1alpha1 Runtime service, served to plugins of upstream releases (v1alpha1's generated code only). */
const alphaRuntimeService: ServiceMethods<(typeof AlphaRuntime)["method"]> = serviceMethods(messageRegistry([messages_v1alpha1_api]), services_v1alpha1_api.Runtime);

/**
 * A served unary method: the request decoded strictly (bytes that do not decode are
 * INVALID_ARGUMENT with the decoder's text, which names the message and field), the handler's
 * answer (a message or an init object) encoded.
 */
function unary<I extends DescMessage, O extends DescMessage>(
  method: UnaryMethod<I, O>,
  handler: (request: MessageShape<I>) => MessageInitShape<O> | Promise<MessageInitShape<O>>,
): RawMethod {
  return {
    kind: "unary",
    handler: async (payload) => {
      let request: MessageShape<I>;
      try {
        request = method.input.decode(payload);
      } catch (e) {
        throw undecodable(e);
      }
      return method.output.encode(await handler(request));
    },
  };
}

/** The service calls are made to, before any translation for a v1alpha1 plugin. */
const BETA_PLUGIN = `${packages.v1beta1}.Plugin`;
const ALPHA_PLUGIN = `${packages.v1alpha1}.Plugin`;

/**
 * The runtime's end of one plugin's socket, the one core every runtime-side peer drives (the
 * runtime, the test runtime, the conformance runner): the mux, a ttrpc client on conn 1 for the
 * Plugin service and a ttrpc server on conn 2 for the Runtime service. It takes the
 * registration and the revision it came in, makes calls in v1beta1 terms and translates them for
 * a v1alpha1 plugin, switches such a plugin to StateChange for the nine old events on its first
 * UNIMPLEMENTED and reports each event it then took that way. Every message is decoded by the
 * generated codecs, strictly, as the runtime decodes it.
 */
export class RuntimeConnection {
  readonly mux: Mux;
  /** Settles with the registration; rejects with the reference's text when it is refused or the connection ends first. */
  readonly registered: Promise<Registration>;
  /** The registration, once the plugin has registered. */
  registration: Registration | undefined;
  /** Whether the nine old events go to this plugin as StateChange. */
  stateChange: boolean;
  private readonly startedInStateChange: boolean;
  private readonly client: Client;
  private settle!: { resolve: (r: Registration) => void; reject: (e: Error) => void };
  private readonly deprecatedMethods = new Set<string>();

  constructor(
    socket: Duplex,
    private readonly options: RuntimeConnectionOptions,
  ) {
    this.mux = new Mux(socket, { busyPollMicros: options.busyPollMicros ?? 0 });
    this.stateChange = this.startedInStateChange = options.stateChange ?? false;
    this.registered = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.registered.catch(() => undefined);
    void this.mux.closed.then(() => this.settle.reject(new Error("failed to register plugin, connection closed")));
    this.client = new Client(this.mux.open(PLUGIN_SERVICE_CONN));
    const server = new Server();
    const serves = options.serves ?? ["v1beta1", "v1alpha1"];
    if (serves.includes("v1beta1")) {
      const beta = runtimeService;
      server.register(`${packages.v1beta1}.Runtime`, {
        [beta.registerPlugin.name]: unary(beta.registerPlugin, (req) => this.register(req, "v1beta1")),
        [beta.updateContainers.name]: unary(beta.updateContainers, async (req) => ({ failed: await options.updateContainers(req) })),
      });
    }
    if (serves.includes("v1alpha1")) {
      // The hook always gets v1beta1 messages: a v1alpha1 plugin's are the same bytes, retyped.
      const alpha = alphaRuntimeService;
      const beta = runtimeService.updateContainers;
      server.register(`${packages.v1alpha1}.Runtime`, {
        [alpha.registerPlugin.name]: unary(alpha.registerPlugin, (req) => this.register(req, "v1alpha1")),
        [alpha.updateContainers.name]: unary(alpha.updateContainers, async (req) => {
          const failed = await options.updateContainers(beta.input.decode(alpha.updateContainers.input.encode(req)));
          return alpha.updateContainers.output.decode(beta.output.encode({ failed }));
        }),
      });
    }
    server.serve(this.mux.open(RUNTIME_SERVICE_CONN));
  }

  /** The revision calls go in: the registration's, v1beta1 until the plugin has registered. */
  get revision(): Revision {
    return this.registration?.revision ?? "v1beta1";
  }

  private register(req: Pick<RegisterPluginRequest, "pluginName" | "pluginIdx">, revision: Revision): object {
    if (this.registration !== undefined) return {};
    if (this.options.checkIdentity) {
      const nameErr = pluginNameError(req.pluginName);
      if (nameErr !== undefined) {
        this.settle.reject(new Error(`failed to register plugin: plugin registered with an invalid name: ${nameErr}`));
        throw new Error(`invalid plugin name: ${nameErr}`);
      }
      const idxErr = pluginIndexError(req.pluginIdx);
      if (idxErr !== undefined) {
        this.settle.reject(new Error(`failed to register plugin: plugin ${goQuote(req.pluginName)} registered with an invalid index: ${idxErr}`));
        throw new Error(`invalid plugin index: ${idxErr}`);
      }
    }
    this.registration = { name: req.pluginName, idx: req.pluginIdx, revision };
    this.settle.resolve(this.registration);
    return {};
  }

  /**
   * Calls the v1beta1 Plugin method `method` (`CreateContainer`) with its encoded v1beta1
   * request, as the plugin's revision takes it; resolves with the v1beta1 answer's bytes. Rejects
   * with what the call ended with (RpcError, ClosedError, ProtocolError, a TranslateError for a
   * request that cannot be sent), or AnswerError for an answer that cannot be translated.
   */
  call(method: string, payload: Uint8Array, options: CallOptions): Promise<Uint8Array> {
    // Not through an async function: the client's own promise saves turns of the microtask queue.
    if (this.revision === "v1beta1") return this.client.call(BETA_PLUGIN, method, payload, options);
    return this.callAlpha(method, payload, options);
  }

  /** How a call of `method` goes on the wire now: `nri.pkg.api.v1alpha1.Plugin/StateChange` and the like. */
  wireName(method: string): string {
    if (this.revision === "v1beta1") return `${BETA_PLUGIN}/${method}`;
    return `${ALPHA_PLUGIN}/${this.stateChange && stateChangeEventOf(method) !== undefined ? "StateChange" : method}`;
  }

  private async callAlpha(method: string, payload: Uint8Array, options: CallOptions): Promise<Uint8Array> {
    const isEvent = stateChangeEventOf(method) !== undefined;
    const viaStateChange = this.stateChange && isEvent;
    const out = toV1alpha1({ service: BETA_PLUGIN, method, payload }, viaStateChange ? "statechange" : "dedicated");
    let res: Uint8Array;
    try {
      res = await this.client.call(out.service, out.method, out.payload, options);
    } catch (e) {
      const fallBack = !viaStateChange && isEvent && e instanceof RpcError && e.code === Code.UNIMPLEMENTED;
      if (!fallBack) throw e;
      this.stateChange = true;
      return this.call(method, payload, options);
    }
    if (viaStateChange && !this.startedInStateChange && !this.deprecatedMethods.has(method)) {
      this.deprecatedMethods.add(method);
      this.options.deprecated?.(method);
    }
    try {
      return responseToV1beta1({ service: BETA_PLUGIN, method }, res).payload;
    } catch (e) {
      throw new AnswerError(method, e as Error);
    }
  }

  /** Ends the connection. */
  close(reason: Error): void {
    this.mux.close(reason);
  }
}
