import type { Revision } from "../api/revision.js";
import type { ChildProcess } from "node:child_process";
import { create, toBinary } from "../api/messages.js";
import type { Container, ContainerUpdate, FailurePolicy, PodSandbox, ValidateContainerAdjustmentRequest } from "../../gen/v1beta1/api_lite.js";
import { pluginService } from "../api/services.js";
import { VALID_EVENTS_MASK, eventBit, eventOfMethod } from "../api/events.js";
import { DEFAULT_MAX_DATA_LENGTH } from "../ttrpc/frame.js";
import { RequestSizes } from "../ttrpc/envelope.js";
import { Code } from "../ttrpc/status.js";
import { withTimeout } from "../ttrpc/with-timeout.js";
import { NRI_VERSION } from "../api/releases.js";
import { type AdaptationError, EventError, PluginCallError, toCallError } from "./errors.js";
import { goStatusText } from "./go/status-text.js";
import { validationRejection, validatorFailure } from "./validation.js";
import type { Logger } from "../api/logger.js";
import type { ResolvedOptions } from "./options.js";
import { type PluginBackend, type PluginKind, SocketBackend } from "./backends.js";
import type { PluginMethodName, PluginRequest, PluginResponse } from "../api/handlers.js";
import type { SharedRequest } from "./shared-payload.js";
import type { BackendCallOptions } from "./backends.js";
import type { RuntimeAnswer, RuntimeCall, RuntimeInterceptor } from "./interceptors.js";
import type { RuntimeMetrics } from "./metrics.js";
import { chainInterceptors } from "../internal/interceptor.js";

/**
 * What the last step of the interceptors needs beyond the call they pass on: the plugin itself
 * and the bytes the event encoded once (used only while the request is the one they encode).
 * Spreading a call keeps it; a call built afresh falls back to its `plugin`.
 */
const ROUTE = Symbol("route");
interface Routed {
  readonly [ROUTE]?: { readonly plugin: RuntimePlugin; readonly request: unknown; readonly shared: SharedRequest | undefined };
}

/** The runtime's interceptors around the last step of every call to a plugin; undefined for none. */
export function runtimeChain(interceptors: readonly RuntimeInterceptor[] | undefined): ((call: RuntimeCall) => Promise<RuntimeAnswer>) | undefined {
  return chainInterceptors(interceptors, (call) => {
    const route = (call as Routed)[ROUTE];
    const plugin = route?.plugin ?? (call.plugin instanceof RuntimePlugin ? call.plugin : undefined);
    if (plugin === undefined) return Promise.reject(new Error(`nri: an interceptor passed on a call to ${call.plugin.id} that is no plugin of this runtime`));
    const shared = route !== undefined && route.request === call.request ? route.shared : undefined;
    return plugin.send(call.method, call.request as never, { signal: call.signal, timeoutMs: call.timeoutMs, shared, metadata: call.metadata }) as Promise<RuntimeAnswer>;
  });
}

/** A lifecycle event's Plugin method: `runPodSandbox` ... `removeContainer`. */
export type EventMethod = Exclude<PluginMethodName, "configure" | "synchronize" | "shutdown" | "stateChange" | "validateContainerAdjustment">;

/** The smallest Synchronize page the reference splits down to. */
const MIN_OBJECTS_PER_SYNC = 8;

/** A read-only view of a registered plugin. */
export interface PluginInfo {
  /** `NN-name`. */
  readonly id: string;
  readonly idx: string;
  readonly name: string;
  readonly kind: PluginKind;
  /** The subscription mask in effect (a Configure answer of 0 means every event). */
  readonly events: number;
  /** The failure policy from Configure; undefined is all defaults. */
  readonly failurePolicy: FailurePolicy | undefined;
  /** The revision of a plugin on a socket, `undefined` for an in-process one. */
  readonly revision: Revision | undefined;
  /** Whether it gets the nine events of the StateChange era as StateChange (a v0.11-era plugin). */
  readonly stateChange: boolean;
  /** Whether it is closed (it is dropped when the next event ends or another plugin joins). */
  readonly closed: boolean;
  /** The process id of a launched plugin. */
  readonly pid: number | undefined;
}

/**
 * One plugin as the runtime's adaptation sees it (the reference's `plugin`): identity, mask and
 * failure policy from Configure, and the relay of each call with its timeout and the failure
 * policy applied. Whatever kind it is, it is reached through its PluginBackend.
 */
export class RuntimePlugin implements PluginInfo {
  events = 0;
  policy: FailurePolicy | undefined;
  private isClosed = false;

  constructor(
    readonly backend: PluginBackend,
    public idx: string,
    public name: string,
    /** Configuration text, sent in Configure. */
    public config: string,
    private readonly options: ResolvedOptions,
    /** The process of a launched plugin. */
    readonly child?: ChildProcess,
  ) {
    void backend.closed.then(() => {
      if (!this.isClosed) options.log.info(`connection to plugin ${JSON.stringify(this.id)} closed`);
      this.isClosed = true;
    });
  }

  get id(): string {
    return `${this.idx}-${this.name}`;
  }

  get kind(): PluginKind {
    return this.backend.kind;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get failurePolicy(): FailurePolicy | undefined {
    return this.policy;
  }

  get revision(): Revision | undefined {
    return this.backend instanceof SocketBackend ? this.backend.registration?.revision : undefined;
  }

  get stateChange(): boolean {
    return this.backend instanceof SocketBackend && this.backend.stateChange;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether it validates container adjustments (subscribed to VALIDATE_CONTAINER_ADJUSTMENT). */
  get isValidator(): boolean {
    return this.subscribes("ValidateContainerAdjustment");
  }

  /** Whether the mask has the bit of the event a Plugin method (e.g. `CreateContainer`) delivers. */
  subscribes(method: string): boolean {
    const e = eventOfMethod(method);
    return e !== undefined && (this.events & eventBit(e)) !== 0;
  }

  /**
   * Waits for a plugin on a socket to register (the registration timeout), then configures it.
   * Rejects with the reference's text; the plugin is closed then.
   */
  async start(): Promise<void> {
    const b = this.backend;
    if (b instanceof SocketBackend) {
      const reg = await withTimeout(b.waitForRegistration(), this.options.registrationTimeoutMs, () => {
        // As the reference does, only a timeout closes the connection here: a refused
        // registration leaves hanging up to the plugin, which has its answer.
        this.close();
        return new Error("plugin registration timed out");
      });
      if (b.kind === "external") {
        this.name = reg.name;
        this.idx = reg.idx;
        this.config = this.options.externalPluginConfig?.(reg) ?? this.config;
      }
    }
    try {
      await this.configure();
    } catch (e) {
      this.close();
      throw e;
    }
  }

  private async configure(): Promise<void> {
    const o = this.options;
    const req = create(pluginService.configure.input, {
      config: this.config,
      runtimeName: o.name,
      runtimeVersion: o.version,
      registrationTimeout: BigInt(Math.trunc(o.registrationTimeoutMs)),
      requestTimeout: BigInt(Math.trunc(o.requestTimeoutMs)),
      NRIVersion: NRI_VERSION,
    });
    const res = await this.call("configure", req).catch((e: unknown) => {
      throw new Error(`failed to configure plugin: ${toCallError(e).message}`, { cause: e });
    });
    let events = res.events >>> 0;
    if (events === 0) events = VALID_EVENTS_MASK;
    const extra = (events & ~VALID_EVENTS_MASK) >>> 0;
    if (extra !== 0) throw new Error(`invalid plugin events: 0x${extra.toString(16)}`);
    this.events = events;
    this.policy = res.failurePolicy;
  }

  /**
   * Sends the runtime's state, split into pages marked `more` when it does not fit one message
   * (each page at most 0.9 of the last, never fewer than 8 objects). Resolves with the updates
   * of the final answer, untouched. A failure closes the plugin.
   */
  async synchronize(pods: PodSandbox[], containers: Container[]): Promise<ContainerUpdate[]> {
    this.options.log.info(`synchronizing plugin ${this.id}`);
    const started = performance.now();
    let podsToSend = pods;
    let ctrsToSend = containers;
    let podsPerMsg = pods.length;
    let ctrsPerMsg = containers.length;
    try {
      for (;;) {
        const more = podsToSend.length > podsPerMsg || ctrsToSend.length > ctrsPerMsg;
        const req = create(pluginService.synchronize.input, { pods: podsToSend.slice(0, podsPerMsg), containers: ctrsToSend.slice(0, ctrsPerMsg), more });
        const timeoutMs = Math.max(1, this.options.requestTimeoutMs - (performance.now() - started));
        let res: PluginResponse<"synchronize"> | undefined;
        let failure: PluginCallError | undefined;
        try {
          // Each page gets what is left of the one request timeout the whole exchange has.
          res = await this.call("synchronize", req, undefined, undefined, timeoutMs);
        } catch (e) {
          failure = toCallError(e);
        }
        if (res !== undefined) {
          if (!more) return res.update;
          if (res.update.length > 0 || res.more !== more) throw new Error("plugin does not handle split sync requests");
          podsToSend = podsToSend.slice(podsPerMsg);
          ctrsToSend = ctrsToSend.slice(ctrsPerMsg);
          podsPerMsg = Math.min(podsPerMsg, podsToSend.length);
          ctrsPerMsg = Math.min(ctrsPerMsg, ctrsToSend.length);
          continue;
        }
        [podsPerMsg, ctrsPerMsg] = splitSync(podsPerMsg, ctrsPerMsg, failure!);
        podsPerMsg = Math.min(podsPerMsg, podsToSend.length);
        ctrsPerMsg = Math.min(ctrsPerMsg, ctrsToSend.length);
        this.options.log.info(`plugin ${this.id}: oversized synchronize message, retrying in smaller chunks`);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /**
   * The reference's send-side refusal of a request over the ttrpc limit, which is what makes it
   * split: the whole ttrpc Request (service, method, timeout and payload) is measured.
   */
  private oversize(req: PluginRequest<"synchronize">, timeoutMs: number): PluginCallError | undefined {
    if (!(this.backend instanceof SocketBackend)) return undefined;
    // Both revisions' service names have the same length.
    const payload = toBinary(pluginService.synchronize.input, req);
    const total = new RequestSizes().measure({ service: "nri.pkg.api.v1alpha1.Plugin", method: "Synchronize", payload, timeoutNano: Math.round(timeoutMs * 1e6), metadata: [] }).total;
    if (total <= DEFAULT_MAX_DATA_LENGTH) return undefined;
    const text = goStatusText(Code.RESOURCE_EXHAUSTED, `message length ${total} exceed maximum message size of ${DEFAULT_MAX_DATA_LENGTH}`);
    return Object.assign(new PluginCallError(text, "status"), { rejectedLength: total });
  }

  /**
   * Relays one lifecycle event, if the plugin subscribed to it. Resolves with the answer, or
   * undefined when the plugin is not subscribed or failed in a way its policy lets the event go
   * on without it; rejects with the EventError that fails the event. `shared`: the request's
   * bytes when the event encoded them once for all its plugins.
   */
  async relay<K extends EventMethod>(method: K, request: PluginRequest<K>, signal?: AbortSignal, shared?: SharedRequest): Promise<PluginResponse<K> | undefined> {
    const name = pluginService[method].name;
    if (!this.subscribes(name)) return undefined;
    try {
      return await this.call(method, request, signal, shared);
    } catch (e) {
      const failure = toCallError(e);
      const open = !this.isClosed;
      const err = handleRequestError(this, name, failure, this.options.log);
      if (open && this.isClosed) this.options.metrics?.recordPluginDrop?.(this.id, name, failure);
      if (err !== undefined) throw err;
      return undefined;
    }
  }

  /**
   * Asks a validator about a CreateContainer's merged adjustment. Resolves with undefined when it
   * accepts, or the error that fails the event: its rejection or its failure.
   */
  async validate(request: ValidateContainerAdjustmentRequest, signal?: AbortSignal): Promise<AdaptationError | undefined> {
    if (!this.isValidator) return undefined;
    let res: PluginResponse<"validateContainerAdjustment">;
    try {
      res = await this.call("validateContainerAdjustment", request, signal);
    } catch (e) {
      const failure = toCallError(e);
      const open = !this.isClosed;
      const err = handleValidatorError(this, failure, this.options.log);
      if (open && this.isClosed) this.options.metrics?.recordPluginDrop?.(this.id, "ValidateContainerAdjustment", failure);
      return err;
    }
    const refusal = validationRejection(this.id, res);
    if (refusal !== undefined) this.options.metrics?.recordValidationRefusal?.(this.id, res.reason);
    return refusal;
  }

  /** Sends Shutdown (best effort, within the request timeout). */
  async shutdown(reason: string): Promise<void> {
    await this.call("shutdown", create(pluginService.shutdown.input, { reason })).catch(() => undefined);
  }

  /** One call, through the interceptors when there are any. */
  private call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, signal?: AbortSignal, shared?: SharedRequest, timeoutMs = this.options.requestTimeoutMs): Promise<PluginResponse<K>> {
    const chain = this.options.chain;
    if (chain === undefined) return this.send(method, request, { signal, timeoutMs, shared });
    const call = { plugin: this, method, request, timeoutMs, signal, metadata: [], [ROUTE]: { plugin: this, request, shared } };
    return chain(call as unknown as RuntimeCall) as Promise<PluginResponse<K>>;
  }

  /** @internal The last step of a call: the backend's, measured for the metrics hooks when there are any. */
  send<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    const metrics = this.options.metrics;
    // As Go, Configure and Shutdown are not measured.
    if (metrics === undefined || method === "configure" || method === "shutdown") return this.backendCall(method, request, options);
    return this.measured(metrics, method, request, options);
  }

  private async measured<K extends PluginMethodName>(metrics: RuntimeMetrics, method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    const op = pluginService[method].name;
    const started = performance.now();
    let res: PluginResponse<K>;
    try {
      res = await this.backendCall(method, request, options);
    } catch (e) {
      metrics.recordPluginLatency?.(this.id, op, performance.now() - started);
      metrics.recordPluginInvocation?.(this.id, op, toCallError(e));
      throw e;
    }
    metrics.recordPluginLatency?.(this.id, op, performance.now() - started);
    metrics.recordPluginInvocation?.(this.id, op, undefined);
    const adjustments = metrics.recordPluginAdjustments;
    if (adjustments !== undefined) {
      // Go's arguments: evictions only of CreateContainer and UpdateContainer, an adjustment only of CreateContainer.
      if (method === "createContainer") {
        const r = res as PluginResponse<"createContainer">;
        adjustments.call(metrics, this.id, op, r.adjust, r.update.length, r.evict.length);
      } else if (method === "updateContainer") {
        const r = res as PluginResponse<"updateContainer">;
        adjustments.call(metrics, this.id, op, undefined, r.update.length, r.evict.length);
      } else if (method === "stopContainer" || method === "synchronize") {
        adjustments.call(metrics, this.id, op, undefined, (res as PluginResponse<"stopContainer">).update.length, 0);
      }
    }
    return res;
  }

  /**
   * The backend's call; a Synchronize page over the ttrpc limit is refused before it is sent, as
   * the reference's ttrpc client refuses it (which is what makes it split).
   */
  private backendCall<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    if (method === "synchronize") {
      const refused = this.oversize(request as PluginRequest<"synchronize">, options.timeoutMs);
      if (refused !== undefined) return Promise.reject(refused);
    }
    return this.backend.call(method, request, options);
  }

  /** Marks the plugin closed and ends its connection; it is dropped after the current event. */
  close(): void {
    this.isClosed = true;
    this.backend.close();
  }

  /** Closes the plugin and, if the runtime launched it, kills its process (SIGKILL) and waits for it. */
  async stop(): Promise<void> {
    this.close();
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await exited;
  }
}

/**
 * The reference's next page size after a failed Synchronize page: only a request refused for its
 * size is split, by the ratio of the limit to its length (at most 0.9), down to 8 objects.
 */
function splitSync(pods: number, ctrs: number, err: PluginCallError): [number, number] {
  const rejected = (err as PluginCallError & { rejectedLength?: number }).rejectedLength;
  const oversized = rejected !== undefined;
  const cause = err.cause;
  const exhausted = oversized || (cause instanceof Error && "code" in cause && cause.code === Code.RESOURCE_EXHAUSTED);
  if (!exhausted) throw err;
  if (pods + ctrs <= MIN_OBJECTS_PER_SYNC || !oversized || rejected === undefined) throw new Error("failed to synchronize plugin with split messages");
  const factor = Math.min(0.9, DEFAULT_MAX_DATA_LENGTH / rejected);
  let p = Math.trunc(pods * factor);
  let c = Math.trunc(ctrs * factor);
  if (p + c < MIN_OBJECTS_PER_SYNC) {
    p = MIN_OBJECTS_PER_SYNC / 2;
    c = MIN_OBJECTS_PER_SYNC / 2;
  }
  return [p, c];
}

/** What the failure policy needs of a plugin. */
export interface PolicySubject {
  readonly id: string;
  readonly policy: FailurePolicy | undefined;
  close(): void;
}

/**
 * Whether a failed call costs the plugin its place: every fatal failure does (no answer, a lost
 * connection, a protocol error), except a timeout when the plugin asked to be kept connected.
 */
export function dropsPlugin(plugin: PolicySubject, err: PluginCallError): boolean {
  if (!err.fatal) return false;
  return err.failure !== "deadline" || !(plugin.policy?.keepConnected ?? false);
}

/**
 * The reference's handling of a failed event call. An error the plugin answered with, a bad
 * answer, or a canceled event fails the event unchanged and the plugin stays. A fatal failure
 * closes the plugin unless dropsPlugin says otherwise, and then fails the event only if the
 * plugin's policy says fail_request; otherwise the event goes on as if the plugin had not been
 * there (undefined is returned).
 */
export function handleRequestError(plugin: PolicySubject, event: string, err: PluginCallError, log: Logger): EventError | undefined {
  if (!err.fatal) return new EventError(err.message, event, plugin.id, { cause: err });
  if (dropsPlugin(plugin, err)) {
    log.error(`closing plugin ${plugin.id}, failed to handle ${event} request: ${err.message}`, { plugin: plugin.id, event });
    plugin.close();
  }
  if (!(plugin.policy?.failRequest ?? false)) {
    log.warn(`plugin ${plugin.id} failed to handle ${event} request, proceeding without it: ${err.message}`, { plugin: plugin.id, event });
    return undefined;
  }
  return new EventError(`plugin ${plugin.id} failed to handle ${event} request: ${err.message}`, event, plugin.id, { cause: err });
}

/**
 * A validator's failure: always fails the event, whatever the policy's fail_request; the
 * plugin is dropped as for any other call.
 */
export function handleValidatorError(plugin: PolicySubject, err: PluginCallError, log: Logger): EventError {
  if (dropsPlugin(plugin, err)) {
    log.error(`closing plugin ${plugin.id}, failed to handle ValidateContainerAdjustment request: ${err.message}`, { plugin: plugin.id, event: "ValidateContainerAdjustment" });
    plugin.close();
  }
  return new EventError(validatorFailure(plugin.id, err.message).message, "CreateContainer", plugin.id, { cause: err });
}
