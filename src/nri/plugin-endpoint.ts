import type { Duplex } from "node:stream";
import { type DescMessage, type MessageInitShape, type MessageShape, create } from "@bufbuild/protobuf";
import {
  type ConfigureRequest,
  type ContainerEviction,
  type ContainerUpdate,
  type Container,
  Plugin,
  type PodSandbox,
  type SynchronizeRequest,
  UpdateContainersRequestSchema,
  UpdateContainersResponseSchema,
  RegisterPluginRequestSchema,
} from "../../gen/v1beta1/api_pb.js";
import { ALL_EVENTS, VALID_EVENTS_MASK, eventBit, formatEvent } from "../events.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { Client } from "../ttrpc/client.js";
import { RpcError } from "../ttrpc/errors.js";
import { type CallContext, type RawMethod, Server } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import { decodeMessage, encodeMessage } from "./codec.js";
import { callError } from "./errors.js";
import { type PluginIdentity, pluginId, resolveIdentity } from "./identity.js";
import { DEFAULT_SOCKET_PATH, connectUnix, inheritedSocket } from "./socket.js";
import { STATE_CHANGE_ERA_METHODS, alphaRequestToBeta, betaResponseToAlpha } from "./translation.js";
import { type ApiVersion, NRI_VERSION, V1ALPHA1, V1BETA1, serviceName } from "./versions.js";

type PluginMethods = (typeof Plugin)["method"];
type MaybePromise<T> = T | Promise<T>;

/**
 * Handlers of a plugin, written against v1beta1 types whatever the runtime speaks. Each takes
 * the request and returns the response (or nothing for an empty one). The plugin subscribes to
 * exactly the events it has handlers for.
 */
export type PluginHandlers = {
  [K in keyof PluginMethods]?: (
    request: MessageShape<PluginMethods[K]["input"]>,
    ctx: CallContext,
  ) => MaybePromise<MessageInitShape<PluginMethods[K]["output"]> | undefined | void>;
};

/**
 * Which protocol a plugin offers. `v1beta1` (the default) serves the Plugin service under both
 * package names and registers with v1beta1 first, falling back to v1alpha1, so it works with
 * runtimes of either revision. The others make it behave like an older plugin (for tests and
 * demos): `v1alpha1` is a dedicated-era plugin, `statechange` one built before dedicated calls.
 */
export type PluginDialect = "v1beta1" | "v1alpha1" | "statechange";

/** Options of a plugin endpoint. */
export interface PluginOptions {
  /** Plugin name; default NRI_PLUGIN_NAME, else the executable's `NN-name`. */
  name?: string;
  /** Two-digit index; default NRI_PLUGIN_IDX, else the executable's `NN-name`. */
  idx?: string;
  /** Runtime socket path; default the inherited NRI_PLUGIN_SOCKET fd, else /var/run/nri/nri.sock. */
  socketPath?: string;
  /** An already connected trunk (overrides socketPath). */
  socket?: Duplex;
  dialect?: PluginDialect;
  /** How long registration, Configure and Synchronize may take in all. Default 5000 ms. */
  registrationTimeoutMs?: number;
  /** Called once when the connection to the runtime ends, with the reason. */
  onClose?: (reason: Error) => void;
  /** Environment to read NRI_PLUGIN_* from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Executable path for the `NN-name` rule (default process.argv[1]). */
  executable?: string;
}

/** The v1beta1 Plugin method of each subscribable event. */
const EVENT_METHOD_LOCAL: ReadonlyMap<number, string> = new Map(
  ALL_EVENTS.map((e) => {
    const m = formatEvent(e);
    return [e, m.charAt(0).toLowerCase() + m.slice(1)];
  }),
);

/** The subscription mask of a set of handlers: one bit per event handled. */
export function eventsOf(handlers: PluginHandlers): number {
  let mask = 0;
  const h = handlers as Record<string, unknown>;
  for (const [event, local] of EVENT_METHOD_LOCAL) if (typeof h[local] === "function") mask |= eventBit(event);
  return mask;
}

/** Runs a typed handler on raw bytes. */
async function invoke(
  schemaIn: DescMessage,
  schemaOut: DescMessage,
  handler: ((req: never, ctx: CallContext) => unknown) | undefined,
  payload: Uint8Array,
  ctx: CallContext,
  fallback?: (req: MessageShape<DescMessage>) => unknown,
): Promise<Uint8Array> {
  const req = decodeMessage(schemaIn, payload);
  const out = handler !== undefined ? await handler(req as never, ctx) : await fallback?.(req);
  // A handler's answer that does not fit its type is our fault, not the runtime's.
  return encodeMessage(schemaOut, (out ?? {}) as MessageInitShape<DescMessage>, Code.INTERNAL);
}

/**
 * A plugin's side of an NRI connection. Serves the Plugin service under both package names (so
 * runtimes of either revision work), registers itself, and hands every call to the handlers in
 * v1beta1 form. It never exits the process: the end of the connection is reported through
 * `closed` and `onClose`.
 */
export class NriPlugin {
  readonly identity: PluginIdentity;
  readonly events: number;
  private readonly handlers: PluginHandlers;
  private readonly options: PluginOptions;
  private readonly dialect: PluginDialect;
  private mux: Mux | undefined;
  private runtimeClient: Client | undefined;
  private runtimeApi: ApiVersion | undefined;
  private syncPods: PodSandbox[] = [];
  private syncContainers: Container[] = [];
  private configured = false;
  private synchronized!: () => void;
  private readonly synchronizedPromise = new Promise<void>((r) => (this.synchronized = r));
  private closeReason: Error | undefined;
  private resolveClosed!: (e: Error) => void;
  /** Settles with the reason once the connection to the runtime has ended. */
  readonly closed: Promise<Error> = new Promise((r) => (this.resolveClosed = r));

  constructor(handlers: PluginHandlers, options: PluginOptions = {}) {
    this.handlers = handlers;
    this.options = options;
    this.dialect = options.dialect ?? "v1beta1";
    this.identity = resolveIdentity({
      name: options.name,
      idx: options.idx,
      env: options.env ?? process.env,
      executable: options.executable ?? process.argv[1],
    });
    this.events = eventsOf(handlers);
  }

  /** `NN-name`. */
  get id(): string {
    return pluginId(this.identity);
  }

  /** The revision the runtime registered us with, once registered. */
  get runtimeVersion(): ApiVersion | undefined {
    return this.runtimeApi;
  }

  /**
   * Connects, serves, registers, and resolves once the runtime has configured and synchronized
   * the plugin; rejects (and closes) if that fails or takes longer than the registration timeout.
   */
  async start(): Promise<void> {
    const env = this.options.env ?? process.env;
    const socket =
      this.options.socket ??
      (this.options.socketPath === undefined ? inheritedSocket(env) : undefined) ??
      (await connectUnix(this.options.socketPath ?? DEFAULT_SOCKET_PATH));
    const mux = new Mux(socket);
    this.mux = mux;
    void mux.closed.then((reason) => this.finish(reason));
    // Serve before registering: the runtime may send Configure before it answers RegisterPlugin.
    this.serve().serve(mux.open(PLUGIN_SERVICE_CONN));
    this.runtimeClient = new Client(mux.open(RUNTIME_SERVICE_CONN));
    const timeoutMs = this.options.registrationTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`nri: plugin ${this.id}: registration timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.register(), timedOut]);
      await Promise.race([this.synchronizedPromise, timedOut, this.closed.then((r) => Promise.reject(r))]);
    } catch (e) {
      this.close(e as Error);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  private async register(): Promise<void> {
    const payload = encodeMessage(RegisterPluginRequestSchema, { pluginName: this.identity.name, pluginIdx: this.identity.idx, NRIVersion: NRI_VERSION });
    const client = this.runtimeClient!;
    if (this.dialect === "v1beta1") {
      try {
        await client.call(serviceName("v1beta1", "Runtime"), "RegisterPlugin", payload);
        this.runtimeApi = "v1beta1";
        return;
      } catch (e) {
        if (!(e instanceof RpcError && e.code === Code.UNIMPLEMENTED)) throw callError(`nri: plugin ${this.id}: registration failed`, e);
      }
    }
    try {
      await client.call(serviceName("v1alpha1", "Runtime"), "RegisterPlugin", payload);
      this.runtimeApi = "v1alpha1";
    } catch (e) {
      throw callError(`nri: plugin ${this.id}: registration failed`, e);
    }
  }

  /**
   * Asks the runtime, unprompted, to update or evict containers; resolves with the updates it
   * could not apply. Every failure names the plugin and the call; a status from the runtime and
   * a request or response that does not encode or decode are NriCallErrors with their code.
   */
  async updateContainers(update: MessageInitShape<typeof UpdateContainersRequestSchema>["update"] = [], evict: ContainerEviction[] | MessageInitShape<typeof UpdateContainersRequestSchema>["evict"] = []): Promise<ContainerUpdate[]> {
    const client = this.runtimeClient;
    if (client === undefined || this.runtimeApi === undefined) throw new Error(`nri: plugin ${this.id}: not registered`);
    try {
      const req = encodeMessage(UpdateContainersRequestSchema, { update: update ?? [], evict: evict ?? [] } as MessageInitShape<typeof UpdateContainersRequestSchema>);
      const res = await client.call(serviceName(this.runtimeApi, "Runtime"), "UpdateContainers", req);
      return decodeMessage(UpdateContainersResponseSchema, res).failed;
    } catch (e) {
      throw callError(`nri: plugin ${this.id}: UpdateContainers`, e);
    }
  }

  /** Closes the connection; `closed` and onClose report `reason`. */
  close(reason: Error = new Error(`nri: plugin ${this.id}: closed`)): void {
    if (this.mux !== undefined) this.mux.close(reason);
    else this.finish(reason);
  }

  private finish(reason: Error): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    this.resolveClosed(reason);
    this.options.onClose?.(reason);
  }

  /** The ttrpc server of conn 1: v1beta1 and/or v1alpha1 Plugin services per the dialect. */
  private serve(): Server {
    const server = new Server();
    const beta: Record<string, RawMethod> = {};
    for (const m of Plugin.methods) {
      beta[m.name] = { kind: "unary", handler: (payload, ctx) => this.dispatch(m.name, payload, ctx) };
    }
    if (this.dialect === "v1beta1") server.register(`${V1BETA1}.Plugin`, beta);
    {
      const alpha: Record<string, RawMethod> = {};
      const names = this.dialect === "statechange" ? STATE_CHANGE_ERA_METHODS : [...Plugin.methods.map((m) => m.name), "StateChange"];
      for (const name of names) {
        alpha[name] = {
          kind: "unary",
          handler: async (payload, ctx) => {
            const call = alphaRequestToBeta(name, payload);
            return betaResponseToAlpha(name, await this.dispatch(call.method, call.payload, ctx));
          },
        };
      }
      server.register(`${V1ALPHA1}.Plugin`, alpha);
    }
    return server;
  }

  /** Handles one v1beta1 Plugin call. */
  private dispatch(method: string, payload: Uint8Array, ctx: CallContext): Promise<Uint8Array> {
    const desc = Plugin.methods.find((m) => m.name === method);
    if (desc === undefined) return Promise.reject(new RpcError(Code.UNIMPLEMENTED, `method ${method}`));
    const h = this.handlers as Record<string, ((req: never, ctx: CallContext) => unknown) | undefined>;
    switch (method) {
      case "Configure":
        return invoke(desc.input, desc.output, undefined, payload, ctx, (req) => this.configure(req as ConfigureRequest, ctx));
      case "Synchronize":
        return invoke(desc.input, desc.output, undefined, payload, ctx, (req) => this.synchronize(req as SynchronizeRequest, ctx));
      default:
        // Events without a handler (the runtime should not send them) get the empty answer.
        return invoke(desc.input, desc.output, h[desc.localName], payload, ctx, () => undefined);
    }
  }

  private async configure(req: ConfigureRequest, ctx: CallContext): Promise<{ events: number }> {
    const custom = (await this.handlers.configure?.(req, ctx)) as { events?: number } | undefined;
    this.configured = true;
    const events = custom?.events ?? this.events;
    if ((events & ~VALID_EVENTS_MASK) !== 0 || (events & ~this.events) !== 0) {
      throw new RpcError(Code.INVALID_ARGUMENT, `plugin ${this.id}: configure asked for events 0x${events.toString(16)} beyond its handlers 0x${this.events.toString(16)}`);
    }
    return { events };
  }

  /** Accumulates chunks sent with `more` and hands the handler everything once. */
  private async synchronize(req: SynchronizeRequest, ctx: CallContext): Promise<unknown> {
    this.syncPods.push(...req.pods);
    this.syncContainers.push(...req.containers);
    if (req.more) return { more: true };
    const whole = create(Plugin.method.synchronize.input, { pods: this.syncPods, containers: this.syncContainers, more: false });
    this.syncPods = [];
    this.syncContainers = [];
    const out = await this.handlers.synchronize?.(whole, ctx);
    if (this.configured) this.synchronized();
    return out ?? {};
  }
}
