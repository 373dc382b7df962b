import type { Duplex } from "node:stream";
import type { MessageShape } from "@bufbuild/protobuf";
import type { Plugin } from "../../gen/v1beta1/api_pb.js";
import {
  type ConfigureRequest,
  type ConfigureResponse,
  type Container,
  type ContainerEviction,
  type ContainerUpdate,
  type FailurePolicy,
  type PodSandbox,
  type SynchronizeRequest,
  services_v1beta1_api,
} from "../../gen/v1beta1/api_lite.js";
import {
  decodeUpdateContainersResponse,
  encodeRegisterPluginRequest,
  encodeUpdateContainersRequest,
  messages_v1beta1_api as v1beta1,
} from "../../gen/v1beta1/api_codec.js";
import { ALL_EVENTS, VALID_EVENTS_MASK, eventBit, eventHandlerName, formatEventMask } from "../api/events.js";
import { Mux, PLUGIN_SERVICE_CONN, RUNTIME_SERVICE_CONN } from "../mux/mux.js";
import { type Dialect, type Revision, packages } from "../api/revision.js";
import { checkBusyPollMicros } from "../internal/busy-poll.js";
import { Client } from "../ttrpc/client.js";
import { CloseOnce } from "../internal/close-once.js";
import { RpcError } from "../ttrpc/errors.js";
import { type CallContext, type RawMethod, Server } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import { callError } from "../api/call-error.js";
import { type Loose, toGeneratedMessage, toMessage } from "./helpers/loose.js";
import type { GeneratedMessage } from "../wire/generated.js";
import { messages } from "./messages.js";
import { type PluginIdentity, pluginId, resolveIdentity } from "../api/identity.js";
import { NRI_VERSION, eventsKnownBy, inferNriVersion, isUnknownNriVersion } from "../api/releases.js";
import { DEFAULT_BUSY_POLL_MICROS, DEFAULT_SOCKET_PATH, connectUnix, inheritedSocket } from "../api/socket.js";

/** The v1beta1 Plugin methods, by handler name. */
export type PluginMethods = (typeof Plugin)["method"];
/** A value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Handlers of a plugin, written against v1beta1 types whatever the runtime speaks. Each takes
 * the request and returns the response, as a message or a plain object of its fields (see
 * Loose), or nothing for an empty one. The plugin subscribes to exactly the events it has
 * handlers for. A handler's thrown error is logged and its message sent to the runtime.
 */
export type PluginHandlers = {
  [K in keyof PluginMethods]?: (
    request: MessageShape<PluginMethods[K]["input"]>,
    ctx: CallContext,
  ) => MaybePromise<Loose<MessageShape<PluginMethods[K]["output"]>> | undefined | void>;
};


/** Where a plugin's own messages go: info and warn about the runtime, error for failures. */
export type PluginLog = (level: "info" | "warn" | "error", message: string) => void;

/** The runtime a plugin is connected to, as its Configure request told. */
export interface RuntimeInfo {
  readonly name: string;
  readonly version: string;
  /** The runtime's NRI release, sent or inferred; undefined when neither worked. */
  readonly nriVersion: string | undefined;
  /** Whether nriVersion was inferred from the runtime's name and version (older runtimes send none). */
  readonly nriVersionInferred: boolean;
  /** The revision the runtime speaks, as told by the package of its Configure call. */
  readonly api: Revision;
}

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
  dialect?: Dialect;
  /** How long registration, Configure and Synchronize may take in all. Default 5000 ms. */
  registrationTimeoutMs?: number;
  /**
   * Microseconds the event loop keeps polling after an answer is sent, while the runtime's
   * next request comes within that time, instead of sleeping until it wakes the plugin (see
   * the README's "Busy polling"); 0 turns it off. Default 250.
   */
  busyPollMicros?: number;
  /** Called once when the connection to the runtime ends, with the reason. */
  onClose?: (reason: Error) => void;
  /** Environment to read NRI_PLUGIN_* from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Executable path for the `NN-name` rule (default process.argv[1]). */
  executable?: string;
  /**
   * What the runtime does when this plugin times out, loses its connection or breaks the
   * protocol (sent in the Configure response; runtimes before NRI v0.12.5 ignore it).
   */
  failurePolicy?: Loose<FailurePolicy>;
  /**
   * Handlers for events the runtime's NRI release does not know: `skip` (the default) leaves
   * them out of the subscription and logs that; `error` fails Configure instead.
   */
  unknownEvents?: "skip" | "error";
  /** Where the plugin's messages go; default: warnings and errors to stderr. */
  log?: PluginLog;
}

/** The subscription mask of a set of handlers: one bit per event handled. */
export function eventsOf(handlers: PluginHandlers): number {
  let mask = 0;
  for (const event of ALL_EVENTS) if (typeof handlers[eventHandlerName(event)] === "function") mask |= eventBit(event);
  return mask;
}

const defaultLog: PluginLog = (level, message) => {
  if (level !== "info") process.stderr.write(`${message}\n`);
};

/*
 * Translation is loaded when a v1alpha1 runtime first calls (or for the older dialects): a
 * plugin of a v1beta1 runtime never needs it, nor the v1alpha1 method tables it reads.
 */
let translateModule: Promise<typeof import("../translate/index.js")> | undefined;
function translation(): Promise<typeof import("../translate/index.js")> {
  return (translateModule ??= import("../translate/index.js"));
}

/** A v1beta1 Plugin method: its handler name and the generated code of its request and response. */
interface PluginMethod {
  readonly localName: string;
  readonly input: GeneratedMessage;
  readonly output: GeneratedMessage;
}

function generated(typeName: string): GeneratedMessage {
  const g = messages.generated(typeName);
  if (g === undefined) throw new Error(`nri: no generated code for ${typeName}`);
  return g;
}

/** The Plugin methods by wire name, from the generated method table (no service descriptor). */
const pluginMethods: ReadonlyMap<string, PluginMethod> = new Map(
  services_v1beta1_api.Plugin.methods.map((m) => [m.name, { localName: m.localName, input: generated(m.input), output: generated(m.output) }]),
);

/**
 * Runs a typed handler on raw bytes. A handler that answers at once is answered at once, with no
 * promise between the request and the bytes of its answer (the ttrpc server writes those at
 * once); a decoding failure throws. A promised answer is awaited.
 */
function invoke(method: PluginMethod, payload: Uint8Array, run: (req: never) => unknown): Uint8Array | Promise<Uint8Array> {
  let req: unknown;
  try {
    req = method.input.decode(payload);
  } catch (e) {
    // The generated decoder's DecodeError names the message and the field already.
    throw new RpcError(Code.INVALID_ARGUMENT, reason(e), { cause: e });
  }
  const r = run(req as never);
  return isThenable(r) ? Promise.resolve(r).then((out) => answer(method, out)) : answer(method, r);
}

/** The bytes of a handler's answer. */
function answer(method: PluginMethod, out: unknown): Uint8Array {
  try {
    return method.output.encode(toGeneratedMessage(method.output, out) as never);
  } catch (e) {
    // A handler's answer that does not fit its type is our fault, not the runtime's.
    throw new RpcError(Code.INTERNAL, `cannot encode ${method.output.typeName}: ${reason(e)}`, { cause: e });
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === "function";
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * A plugin's side of an NRI connection. Serves the Plugin service under both package names (so
 * runtimes of either revision work), registers itself, and hands every call to the handlers in
 * v1beta1 form. It never exits the process: the end of the connection is reported through
 * `closed` and `onClose`.
 */
export class NriPlugin {
  readonly identity: PluginIdentity;
  /** The events the handlers cover; the subscription may be narrower (see `subscribed`). */
  readonly events: number;
  /** The connection the runtime's calls come in on. */
  private served: ReturnType<Server["serve"]> | undefined;
  private readonly handlers: PluginHandlers;
  private readonly options: PluginOptions;
  private readonly busyPollMicros: number;
  private readonly dialect: Dialect;
  private readonly log: PluginLog;
  private mux: Mux | undefined;
  private runtimeClient: Client | undefined;
  private runtimeApi: Revision | undefined;
  private runtimeInfo: RuntimeInfo | undefined;
  private subscribedMask: number | undefined;
  private syncPods: PodSandbox[] = [];
  private syncContainers: Container[] = [];
  private configured = false;
  /** Why setup failed on our side (Configure or the first Synchronize), if it did. */
  private configureError: Error | undefined;
  private isSynchronized = false;
  private synchronized!: () => void;
  private readonly synchronizedPromise = new Promise<void>((r) => (this.synchronized = r));
  private readonly shut = new CloseOnce();
  /** Settles with the reason once the connection to the runtime has ended. */
  readonly closed: Promise<Error> = this.shut.closed;

  constructor(handlers: PluginHandlers, options: PluginOptions = {}) {
    this.handlers = handlers;
    this.options = options;
    this.dialect = options.dialect ?? "v1beta1";
    this.busyPollMicros = checkBusyPollMicros("nri", options.busyPollMicros, DEFAULT_BUSY_POLL_MICROS);
    this.log = options.log ?? defaultLog;
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
  get runtimeVersion(): Revision | undefined {
    return this.runtimeApi;
  }

  /** The runtime, once it has configured the plugin. */
  get runtime(): RuntimeInfo | undefined {
    return this.runtimeInfo;
  }

  /** The event mask sent to the runtime, once configured. */
  get subscribed(): number | undefined {
    return this.subscribedMask;
  }

  /**
   * Connects, serves, registers, and resolves once the runtime has configured and synchronized
   * the plugin; rejects (and closes) if that fails or takes longer than the registration timeout.
   */
  async start(): Promise<void> {
    // Before connecting: nothing may come between the mux's creation and the server's.
    const stateChangeEra = this.dialect === "statechange" ? (await translation()).stateChangeEraMethods : undefined;
    const env = this.options.env ?? process.env;
    const socket =
      this.options.socket ??
      (this.options.socketPath === undefined ? inheritedSocket(env) : undefined) ??
      (await connectUnix(this.options.socketPath ?? DEFAULT_SOCKET_PATH));
    const mux = new Mux(socket, { busyPollMicros: this.busyPollMicros });
    this.mux = mux;
    void mux.closed.then((reason) => this.finish(reason));
    // Serve before registering: the runtime may send Configure before it answers RegisterPlugin.
    this.served = this.serve(stateChangeEra).serve(mux.open(PLUGIN_SERVICE_CONN));
    this.runtimeClient = new Client(mux.open(RUNTIME_SERVICE_CONN));
    const timeoutMs = this.options.registrationTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`nri: plugin ${this.id}: registration timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    const closedEarly = this.closed.then((r) => Promise.reject(r));
    try {
      await Promise.race([this.register(), timedOut, closedEarly]);
      await Promise.race([this.synchronizedPromise, timedOut, closedEarly]);
    } catch (e) {
      this.close(e as Error);
      throw this.shut.reason ?? e;
    } finally {
      clearTimeout(timer);
    }
  }

  private async register(): Promise<void> {
    const payload = encodeRegisterPluginRequest({ pluginName: this.identity.name, pluginIdx: this.identity.idx, NRIVersion: NRI_VERSION });
    const client = this.runtimeClient!;
    if (this.dialect === "v1beta1") {
      try {
        await client.call(`${packages.v1beta1}.Runtime`, "RegisterPlugin", payload);
        this.runtimeApi = "v1beta1";
        return;
      } catch (e) {
        if (!(e instanceof RpcError && e.code === Code.UNIMPLEMENTED)) {
          throw callError(`nri: plugin ${this.id}: registration failed`, e);
        }
      }
    }
    // A v1alpha1 runtime's calls all need translation: load it while registration is in flight.
    translation().catch(() => undefined); // a failure surfaces where the module is used
    try {
      await client.call(`${packages.v1alpha1}.Runtime`, "RegisterPlugin", payload);
      this.runtimeApi = "v1alpha1";
    } catch (e) {
      throw callError(`nri: plugin ${this.id}: registration failed`, e);
    }
  }

  /**
   * Asks the runtime, unprompted, to update or evict containers; resolves with the updates it
   * could not apply.
   */
  async updateContainers(update: readonly Loose<ContainerUpdate>[] = [], evict: readonly Loose<ContainerEviction>[] = []): Promise<ContainerUpdate[]> {
    const client = this.runtimeClient;
    if (client === undefined || this.runtimeApi === undefined) throw new Error(`nri: plugin ${this.id}: not registered`);
    const api = this.runtimeApi;
    try {
      let payload: Uint8Array;
      try {
        payload = encodeUpdateContainersRequest(toMessage(v1beta1.UpdateContainersRequest, { update: [...update], evict: [...evict] }));
      } catch (e) {
        throw new RpcError(Code.INVALID_ARGUMENT, `cannot encode nri.pkg.api.v1beta1.UpdateContainersRequest: ${reason(e)}`, { cause: e });
      }
      const res = await client.call(`${packages[api]}.Runtime`, "UpdateContainers", payload);
      try {
        return decodeUpdateContainersResponse(res).failed;
      } catch (e) {
        throw new RpcError(Code.INVALID_ARGUMENT, reason(e), { cause: e });
      }
    } catch (e) {
      throw callError(`nri: plugin ${this.id}: UpdateContainers`, e);
    }
  }

  /**
   * Closes the connection at once; `closed` and onClose report `reason`. Answers still queued
   * are lost: from a handler (say, Shutdown's) use end().
   */
  close(reason: Error = new Error(`nri: plugin ${this.id}: closed`)): void {
    if (this.mux !== undefined) this.mux.close(reason);
    else this.finish(reason);
  }

  /**
   * Closes the connection once the answers to the calls in flight are written, so a handler may
   * end the plugin (Shutdown's, typically) without cutting off its own answer; the runtime's new
   * calls are refused meanwhile. After `graceMs` it closes as close() does. Settles like `closed`.
   */
  end(reason: Error = new Error(`nri: plugin ${this.id}: closed`), graceMs = 1000): Promise<Error> {
    const mux = this.mux;
    const served = this.served;
    if (mux === undefined || served === undefined) {
      this.close(reason);
      return this.closed;
    }
    const timer = setTimeout(() => this.close(reason), graceMs);
    void this.closed.then(() => clearTimeout(timer));
    void served.closeWhenIdle().then(() => mux.end(reason));
    return this.closed;
  }

  private finish(reason: Error): void {
    if (this.shut.reason !== undefined) return;
    const why = this.explainEarlyClose(reason);
    this.shut.begin(why);
    // Our own setup errors were logged where they happened; a refusal is news.
    if (why !== reason && why !== this.configureError) this.log("error", why.message);
    this.shut.settle();
    this.options.onClose?.(why);
  }

  /**
   * A connection that ends between Configure and Synchronize ended because of the configuration:
   * say so, with our own Configure error or the likely reason the runtime refused it.
   */
  private explainEarlyClose(reason: Error): Error {
    if (this.isSynchronized) return reason;
    if (this.configureError !== undefined) return this.configureError;
    if (!this.configured) return reason;
    return new Error(`nri: plugin ${this.id}: the runtime closed the connection right after Configure: it refused the configuration; likely cause: ${this.likelyRefusal()}`, { cause: reason });
  }

  private likelyRefusal(): string {
    const rt = this.runtimeInfo;
    const mask = this.subscribedMask ?? 0;
    const newer = mask & ~(eventsKnownBy("v0.9.0") ?? 0);
    if (rt?.nriVersion === undefined && newer !== 0) {
      return `its NRI version is unknown and runtimes before NRI v0.10.0 refuse events they do not know; subscribed ${formatEventMask(newer)} (0x${newer.toString(16)}) may be among them (see the runtime's log for "invalid plugin events")`;
    }
    const where = rt === undefined ? "" : ` of ${rt.name} ${rt.version}`;
    return `not one the plugin can tell (subscribed 0x${mask.toString(16)}${rt?.nriVersion === undefined ? "" : `, runtime NRI ${rt.nriVersion}`}); the log${where} says why`;
  }

  /** The ttrpc server of conn 1: v1beta1 and/or v1alpha1 Plugin services per the dialect. */
  private serve(stateChangeEraMethods: readonly string[] | undefined): Server {
    const server = new Server();
    if (this.dialect === "v1beta1") {
      const beta: Record<string, RawMethod> = {};
      for (const name of pluginMethods.keys()) beta[name] = { kind: "unary", handler: (payload, ctx) => this.dispatch(name, payload, ctx, "v1beta1") };
      server.register(`${packages.v1beta1}.Plugin`, beta);
    }
    const alphaService = `${packages.v1alpha1}.Plugin`;
    const alpha: Record<string, RawMethod> = {};
    const names = stateChangeEraMethods ?? [...pluginMethods.keys(), "StateChange"];
    for (const name of names) {
      alpha[name] = {
        kind: "unary",
        handler: async (payload, ctx) => {
          const { toV1beta1, responseToV1alpha1 } = await translation();
          const call = toV1beta1({ service: alphaService, method: name, payload });
          const answer = await this.dispatch(call.method, call.payload, ctx, "v1alpha1");
          return responseToV1alpha1({ service: alphaService, method: name }, answer).payload;
        },
      };
    }
    server.register(alphaService, alpha);
    return server;
  }

  /** Handles one v1beta1 Plugin call that came in as a call of revision `via`. */
  private dispatch(method: string, payload: Uint8Array, ctx: CallContext, via: Revision): Uint8Array | Promise<Uint8Array> {
    const desc = pluginMethods.get(method);
    if (desc === undefined) throw new RpcError(Code.UNIMPLEMENTED, `method ${method}`);
    const h = this.handlers as Record<string, ((req: never, ctx: CallContext) => unknown) | undefined>;
    switch (method) {
      case "Configure":
        return invoke(desc, payload, (req: ConfigureRequest) => this.configure(req, ctx, via));
      case "Synchronize":
        return invoke(desc, payload, async (req: SynchronizeRequest) => {
          try {
            return await this.guard(method, () => this.synchronize(req, ctx));
          } catch (e) {
            // Before the plugin is up, a failed Synchronize is why the runtime drops it.
            if (!this.isSynchronized) this.configureError ??= new Error(`nri: plugin ${this.id}: synchronize failed: ${(e as Error).message}`, { cause: e });
            throw e;
          }
        });
      default: {
        // Events without a handler (the runtime should not send them) get the empty answer.
        const handler = h[desc.localName];
        return invoke(desc, payload, (req) => (handler === undefined ? undefined : this.guard(method, () => handler(req, ctx))));
      }
    }
  }

  /**
   * Runs a handler; its error is logged and travels to the runtime with its own message. An
   * answer given at once is returned as it is, a promised one as a promise.
   */
  private guard(method: string, run: () => unknown): unknown {
    let r: unknown;
    try {
      r = run();
    } catch (e) {
      this.logFailure(method, e);
      throw e;
    }
    if (!isThenable(r)) return r;
    return Promise.resolve(r).then(undefined, (e: unknown) => {
      this.logFailure(method, e);
      throw e;
    });
  }

  private logFailure(method: string, e: unknown): void {
    this.log("error", `nri: plugin ${this.id}: ${method} failed: ${(e as Error).message}`);
  }

  private async configure(req: ConfigureRequest, ctx: CallContext, via: Revision): Promise<ConfigureResponse> {
    try {
      const res = await this.configureOrThrow(req, ctx, via);
      this.configured = true;
      return res;
    } catch (e) {
      const message = e instanceof RpcError ? e.rawMessage : (e as Error).message;
      this.configureError = new Error(`nri: plugin ${this.id}: configure failed: ${message}`, { cause: e });
      this.log("error", this.configureError.message);
      throw e;
    }
  }

  private async configureOrThrow(req: ConfigureRequest, ctx: CallContext, via: Revision): Promise<ConfigureResponse> {
    // Runtimes before NRI v0.12 send no version: tell it from their name and version, as the Go stub does.
    let nriVersion: string | undefined = req.NRIVersion;
    let inferred = false;
    if (isUnknownNriVersion(req.NRIVersion)) {
      nriVersion = undefined;
      try {
        nriVersion = inferNriVersion(req.runtimeName, req.runtimeVersion);
        inferred = true;
        req.NRIVersion = nriVersion;
        this.log("info", `nri: plugin ${this.id}: inferred NRI ${nriVersion} for runtime ${req.runtimeName} ${req.runtimeVersion}`);
      } catch (e) {
        this.log("warn", `nri: plugin ${this.id}: ${(e as Error).message.replace(/^nri: /u, "")}`);
      }
    }
    this.runtimeInfo = { name: req.runtimeName, version: req.runtimeVersion, nriVersion, nriVersionInferred: inferred, api: via };

    const custom = toMessage(v1beta1.ConfigureResponse, (await this.handlers.configure?.(req, ctx)) as never);
    // Like the Go stub: 0 from the handler means "the events I have handlers for".
    let events = custom.events === 0 ? this.events : custom.events;
    if ((events & ~VALID_EVENTS_MASK) !== 0 || (events & ~this.events) !== 0) {
      throw new RpcError(Code.INVALID_ARGUMENT, `configure subscribed events 0x${(events >>> 0).toString(16)} beyond the handlers' 0x${this.events.toString(16)}`);
    }
    const known = nriVersion === undefined ? undefined : eventsKnownBy(nriVersion);
    const unknown = known === undefined ? 0 : events & ~known;
    if (unknown !== 0) {
      const what = `${formatEventMask(unknown)} (0x${unknown.toString(16)})`;
      const why = `runtime ${req.runtimeName} ${req.runtimeVersion} has NRI ${nriVersion}${inferred ? " (inferred)" : ""}, which does not know them`;
      if (this.options.unknownEvents === "error" || (events & ~unknown) === 0) {
        throw new RpcError(Code.FAILED_PRECONDITION, `handlers for events ${what}: ${why}`);
      }
      this.log("warn", `nri: plugin ${this.id}: not subscribing to ${what}: ${why}`);
      events &= ~unknown;
    }
    this.subscribedMask = events;
    const failurePolicy = custom.failurePolicy ?? (this.options.failurePolicy === undefined ? undefined : toMessage(v1beta1.ConfigureResponse, { failurePolicy: this.options.failurePolicy }).failurePolicy);
    return toMessage(v1beta1.ConfigureResponse, failurePolicy === undefined ? { events } : { events, failurePolicy });
  }

  /** Accumulates chunks sent with `more` and hands the handler everything once. */
  private async synchronize(req: SynchronizeRequest, ctx: CallContext): Promise<unknown> {
    this.syncPods.push(...req.pods);
    this.syncContainers.push(...req.containers);
    if (req.more) return { more: true };
    const whole = v1beta1.SynchronizeRequest.create({ pods: this.syncPods, containers: this.syncContainers, more: false });
    this.syncPods = [];
    this.syncContainers = [];
    const out = await this.handlers.synchronize?.(whole, ctx);
    if (this.configured) {
      this.isSynchronized = true;
      this.synchronized();
    }
    return out ?? {};
  }
}
