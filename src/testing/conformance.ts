import { type JsonValue, type MessageInitShape, clone, create } from "@bufbuild/protobuf";
import {
  ContainerSchema,
  ContainerState,
  type ContainerUpdate,
  type CreateContainerResponse,
  CreateContainerRequestSchema,
  PodSandboxSchema,
  type StopContainerResponse,
  type UpdateContainerResponse,
  UpdateContainerRequestSchema,
} from "../../gen/v1beta1/api_pb.js";
import { TEARDOWN_EVENTS, VALID_EVENTS_MASK, eventBit, eventOfMethod, formatEvent } from "../api/events.js";
import { checkPluginIndex, checkPluginName } from "../api/identity.js";
import { CreateContainerResult } from "../runtime/create-result.js";
import { StopContainerResult, UpdateContainerResult } from "../runtime/update-result.js";
import { type Deprecation, stateChangeDeprecation } from "../runtime/deprecation.js";
import { SessionDecoder } from "../capture/session-decoder.js";
import { RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";
import type { PluginInstance, PluginStarter } from "./plugin-starter.js";
import { DEFAULT_SCENARIO, type Scenario } from "./scenario.js";
import { DIALECTS, type Dialect } from "../api/revision.js";
import { type CallRecord, type PluginMethodName, ScriptedConnection } from "./scripted-connection.js";

/** The teardown events' method names (`StopPodSandbox`...). */
const TEARDOWN: readonly string[] = TEARDOWN_EVENTS.map((e) => formatEvent(e));

/** The checks of the suite, in report order. */
export const CHECKS = {
  registration: "registers within the registration timeout with a valid name and index",
  configure: "answers Configure with a valid event mask",
  synchronize: "answers paged Synchronize: more on every page but the last, no updates before it",
  events: "answers every event it subscribed to, sent in runtime order",
  teardown: `never fails a teardown event (${TEARDOWN.join(", ")})`,
  adjustments: "answers each event only with what that event's response has",
  ids: "updates and evictions name containers that exist",
  creating: "does not update the container being created",
  merge: "adjustments and updates merge as the Go runtime merges them",
  timeouts: "answers within the runtime's request timeout",
  alive: "stays running and connected from registration to Shutdown",
  unsolicited: "unsolicited UpdateContainers name containers that exist",
  shutdown: "answers Shutdown",
  "after-shutdown": "writes nothing after answering Shutdown",
  restart: "after a runtime restart the old instance goes, and a new one registers and synchronizes with the surviving state",
} as const;

/** The id of a check. */
export type CheckId = keyof typeof CHECKS;

/** One failed expectation, with the message that broke it. */
export interface Failure {
  readonly message: string;
  /** The offending message as protobuf JSON (a response, or the records of stray bytes). */
  readonly offending?: JsonValue;
}

/** The outcome of one check in one dialect. */
export interface CheckResult {
  readonly id: CheckId;
  readonly title: string;
  readonly status: "pass" | "fail" | "skip";
  readonly failures: readonly Failure[];
  /** Why it was skipped. */
  readonly note?: string;
}

/** The outcome of the suite in one dialect. */
export interface DialectReport {
  readonly dialect: Dialect;
  /** How the plugin registered, if it did. */
  readonly registration?: { readonly name: string; readonly idx: string; readonly version: string };
  /** The end of what the plugin wrote to stderr, when a check failed and the runner started it. */
  readonly stderr?: string;
  readonly checks: readonly CheckResult[];
  /** Events the plugin only takes through StateChange, recorded as a dedicated-era runtime does. */
  readonly deprecations: readonly Deprecation[];
  readonly passed: boolean;
}

/** The outcome of the suite. */
export interface ConformanceReport {
  /** How the plugin was started. */
  readonly plugin: string;
  readonly dialects: readonly DialectReport[];
  readonly passed: boolean;
}

/** Options of runConformance. */
export interface ConformanceOptions {
  starter: PluginStarter;
  /** Default: every dialect. */
  dialects?: readonly Dialect[];
  /** The request timeout sent in Configure and applied to every call. Default 2000 ms. */
  requestTimeoutMs?: number;
  /** How long a plugin may take to connect and register. Default 5000 ms. */
  registrationTimeoutMs?: number;
  /** How long a launched plugin may take to exit once a restarting runtime closed its connection. Default 2000 ms. */
  goneTimeoutMs?: number;
  /** How long the runner watches for writes after Shutdown is answered, unless the plugin goes first. Default 500 ms. */
  shutdownWindowMs?: number;
  /** ConfigureRequest.config. Default empty, as with no configuration file. */
  config?: string;
  /** The pods and containers the script is about (see parseScenario). Default DEFAULT_SCENARIO. */
  scenario?: Scenario;
  /**
   * How long the plugin must stay connected after its last answer before the runner closes the
   * connection (the restart) or sends Shutdown, so that a plugin dying shortly after an answer
   * fails the alive check rather than racing the runner's next step. Default 200 ms.
   */
  aliveWindowMs?: number;
}

const sleep = (ms: number): Promise<"timeout"> => new Promise((r) => setTimeout(() => r("timeout"), ms).unref());

/** Collects the failures and observations of every check of one dialect. */
class Checks {
  private readonly failures = new Map<CheckId, Failure[]>();
  private readonly seen = new Map<CheckId, number>();
  private readonly notes = new Map<CheckId, string>();

  ok(id: CheckId): void {
    this.seen.set(id, (this.seen.get(id) ?? 0) + 1);
  }

  fail(id: CheckId, message: string, offending?: JsonValue): void {
    this.ok(id);
    const list = this.failures.get(id) ?? [];
    list.push(offending === undefined ? { message } : { message, offending });
    this.failures.set(id, list);
  }

  note(id: CheckId, note: string): void {
    this.notes.set(id, note);
  }

  results(): CheckResult[] {
    return (Object.keys(CHECKS) as CheckId[]).map((id) => {
      const failures = this.failures.get(id) ?? [];
      const note = this.notes.get(id);
      const status = failures.length > 0 ? "fail" : (this.seen.get(id) ?? 0) > 0 ? "pass" : "skip";
      return { id, title: CHECKS[id], status, failures, ...(note === undefined || status !== "skip" ? {} : { note }) };
    });
  }
}

/** The plugin stopped in a way that ends the script for this dialect. */
class Gone extends Error {}

/**
 * Runs the conformance suite: for each dialect, starts the plugin, plays that runtime through
 * registration, Configure, paged Synchronize, the pod and container lifecycle in runtime order
 * with a runtime restart in the middle, and Shutdown, checking every answer against the protocol
 * and against what the runtimes accept. Never throws for the plugin's faults: they are failures
 * in the report.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const dialects = options.dialects ?? DIALECTS;
  const reports: DialectReport[] = [];
  try {
    for (const dialect of dialects) reports.push(await runDialect(dialect, options));
  } finally {
    await options.starter.close();
  }
  return { plugin: options.starter.description, dialects: reports, passed: reports.every((r) => r.passed) };
}

async function runDialect(dialect: Dialect, o: ConformanceOptions): Promise<DialectReport> {
  const requestTimeoutMs = o.requestTimeoutMs ?? 2000;
  const registrationTimeoutMs = o.registrationTimeoutMs ?? 5000;
  const goneTimeoutMs = o.goneTimeoutMs ?? 2000;
  const scenario = o.scenario ?? DEFAULT_SCENARIO;
  const { pod: pod1, container: ctr1, existing } = scenario;
  const target = ctr1.id;
  const checks = new Checks();
  const deprecations: Deprecation[] = [];
  const known = new Set(existing.containers.map((c) => c.id));
  let registration: DialectReport["registration"];
  let instance: PluginInstance | undefined;
  let conn: ScriptedConnection | undefined;
  let id = "";
  let mask = 0;
  let restarting = false;
  let ended: string | undefined;
  const conns: ScriptedConnection[] = [];
  const instances: PluginInstance[] = [];
  /** Per connection: settles with why the plugin went, once it went while expected to stay. */
  const lostOf = new WeakMap<ScriptedConnection, Promise<string>>();

  /** Starts an instance and waits for its registration; the check that a failure belongs to is `check`. */
  const connect = async (check: "registration" | "restart"): Promise<void> => {
    try {
      instance = await o.starter.start(registrationTimeoutMs);
    } catch (e) {
      checks.fail(check, `the plugin did not connect: ${(e as Error).message}`);
      throw new Gone();
    }
    const inst = instance;
    const c = new ScriptedConnection(inst.socket, {
      dialect,
      onUpdateContainers: () => [],
      onDeprecation: (method) => deprecations.push(stateChangeDeprecation(id, method)),
    });
    conn = c;
    conns.push(c);
    // Anything the plugin writes after answering Shutdown is kept, to be decoded for the report.
    const stray: Uint8Array[] = [];
    inst.socket.on("data", (d: Uint8Array) => {
      if (c.shutdownAnswered) stray.push(d);
    });
    strayOf.set(c, stray);
    instances.push(inst);
    // Whether the plugin going is a fault is decided when it goes (not during a restart, nor
    // after Shutdown); for a process, its exit status says more than its connection's end.
    const unexpected = (): boolean => !restarting && !c.shutdownAnswered;
    const lost = Promise.race([inst.gone.then((why) => ({ why, fault: unexpected() })), c.mux.closed.then(() => ({ why: undefined, fault: unexpected() }))]).then(async ({ why, fault }) => {
      if (!fault) return new Promise<string>(() => undefined);
      const said = why ?? (await Promise.race([inst.gone, sleep(goneTimeoutMs).then(() => "closed its connection")]));
      ended ??= `plugin ${said}`;
      return ended;
    });
    lostOf.set(c, lost);
    const reg = await Promise.race([c.registered.catch(() => "closed its connection"), sleep(registrationTimeoutMs), inst.gone]);
    if (typeof reg === "string") {
      checks.fail(check, reg === "timeout" ? `the plugin did not register within ${registrationTimeoutMs} ms` : `the plugin ${reg} before registering`);
      throw new Gone();
    }
    id = `${reg.idx}-${reg.name}`;
    registration = { name: reg.name, idx: reg.idx, version: reg.revision };
    const bad: string[] = [];
    try {
      checkPluginName(reg.name);
    } catch (e) {
      bad.push((e as Error).message);
    }
    try {
      checkPluginIndex(reg.idx);
    } catch (e) {
      bad.push((e as Error).message);
    }
    const want = o.starter.expected;
    if (want?.name !== undefined && want.name !== reg.name) bad.push(`registered as "${reg.name}", started as "${want.name}"`);
    if (want?.idx !== undefined && want.idx !== reg.idx) bad.push(`registered with index "${reg.idx}", started with "${want.idx}"`);
    // A bad name is a registration fault whenever it shows.
    for (const b of bad) checks.fail("registration", b);
    checks.ok(check);
  };

  const strayOf = new WeakMap<ScriptedConnection, Uint8Array[]>();

  /** Before the runner ends the connection itself: the plugin must still be there a while after its last answer. */
  const stillThere = async (): Promise<void> => {
    await Promise.race([lostOf.get(conn!), sleep(o.aliveWindowMs ?? 200)]);
    if (ended !== undefined) throw new Gone();
  };

  /** One call with the checks every answer gets; throws Gone once the plugin is gone. */
  const call = async <K extends PluginMethodName>(method: K, request: MessageInitShape<never>, failAs?: CheckId): Promise<CallRecord> => {
    if (ended !== undefined) throw new Gone();
    const r = await conn!.call(method, request as never, requestTimeoutMs);
    // A call cut off by the plugin going is the alive check's failure, not the call's.
    if (r.error !== undefined && conn!.mux.closeReason !== undefined && !restarting) {
      ended ??= "plugin closed its connection";
      throw new Gone();
    }
    const where = `${r.method} (sent as ${r.wire})`;
    const timedOut = r.error instanceof RpcError && r.error.code === Code.DEADLINE_EXCEEDED;
    if (timedOut || r.ms > requestTimeoutMs) checks.fail("timeouts", `${where} took ${timedOut ? "longer than" : Math.round(r.ms)} ${timedOut ? `${requestTimeoutMs} ms` : `ms, over the ${requestTimeoutMs} ms timeout`}`);
    else checks.ok("timeouts");
    if (r.error !== undefined && !timedOut) {
      const check = failAs ?? (TEARDOWN.includes(r.method) ? "teardown" : "events");
      checks.fail(check, `${where} failed: ${r.error.message}`);
    } else if (r.error === undefined) {
      checks.ok(failAs ?? (TEARDOWN.includes(r.method) ? "teardown" : "events"));
      if (r.unknownFields !== undefined) {
        checks.fail("adjustments", `${where} answered with field${r.unknownFields.length > 1 ? "s" : ""} ${r.unknownFields.join(", ")}, which ${r.method}Response does not have`, r.responseJson);
      } else checks.ok("adjustments");
    }
    return r;
  };

  const subscribed = (method: string): boolean => {
    const e = eventOfMethod(method);
    return e === undefined || (mask & eventBit(e)) !== 0;
  };

  const checkIds = (r: CallRecord, updates: readonly ContainerUpdate[], evicted: readonly string[]): void => {
    for (const u of updates) {
      if (!known.has(u.containerId)) checks.fail("ids", `${r.method} updates container "${u.containerId}", which does not exist`, r.responseJson);
      else checks.ok("ids");
    }
    for (const e of evicted) {
      if (!known.has(e)) checks.fail("ids", `${r.method} evicts container "${e}", which does not exist`, r.responseJson);
      else checks.ok("ids");
    }
  };

  const merge = (r: CallRecord, run: () => void): void => {
    try {
      run();
      checks.ok("merge");
    } catch (e) {
      checks.fail("merge", `${r.method}: ${(e as Error).message}`, r.responseJson);
    }
  };

  const configureAndSync = async (pages: { pods: MessageInitShape<typeof PodSandboxSchema>[]; containers: MessageInitShape<typeof ContainerSchema>[] }[], check: "configure" | "restart"): Promise<void> => {
    const conf = await call(
      "configure",
      {
        config: o.config ?? "",
        runtimeName: "nri-wire-test-plugin",
        runtimeVersion: "v0.1.0",
        registrationTimeout: BigInt(registrationTimeoutMs),
        requestTimeout: BigInt(requestTimeoutMs),
        NRIVersion: dialect === "statechange" ? "v0.11.0" : "v0.12.5",
      } as never,
      check,
    );
    if (conf.error !== undefined) throw new Gone();
    const events = (conf.response as { events?: number } | undefined)?.events ?? 0;
    if ((events & ~VALID_EVENTS_MASK) !== 0) {
      checks.fail(check, `Configure asked for events 0x${(events >>> 0).toString(16)}, beyond the valid 0x${VALID_EVENTS_MASK.toString(16)}`, conf.responseJson);
      throw new Gone();
    }
    mask = events === 0 ? VALID_EVENTS_MASK : events;
    for (const [i, page] of pages.entries()) {
      const more = i < pages.length - 1;
      const r = await call("synchronize", { ...page, more } as never, check === "restart" ? "restart" : "synchronize");
      if (r.error !== undefined) throw new Gone();
      const res = r.response as unknown as { more: boolean; update: ContainerUpdate[] };
      if (more && !res.more) checks.fail(check === "restart" ? "restart" : "synchronize", `Synchronize page ${i + 1} of ${pages.length} was answered with more = false`, r.responseJson);
      if (more && res.update.length > 0) checks.fail(check === "restart" ? "restart" : "synchronize", `Synchronize page ${i + 1} of ${pages.length} was answered with updates before the last page`, r.responseJson);
      checkIds(r, res.update, []);
    }
  };

  const event = async (method: PluginMethodName, request: MessageInitShape<never>): Promise<CallRecord | undefined> => {
    const name = method.charAt(0).toUpperCase() + method.slice(1);
    if (!subscribed(name)) return undefined;
    return call(method, request);
  };

  try {
    await connect("registration");
    await configureAndSync(
      [
        { pods: [...existing.pods], containers: [] },
        { pods: [], containers: [...existing.containers] },
      ],
      "configure",
    );
    checks.ok("synchronize");
    await event("runPodSandbox", { pod: pod1 } as never);
    known.add(target);
    const createRequest = create(CreateContainerRequestSchema, { pod: pod1, container: ctr1 });
    const created = await event("createContainer", clone(CreateContainerRequestSchema, createRequest) as never);
    let validateAdjust: CreateContainerResponse | undefined;
    if (created?.response !== undefined) {
      const res = created.response as CreateContainerResponse;
      checkIds(created, res.update, res.evict.map((e) => e.containerId));
      const self = res.update.filter((u) => u.containerId === target);
      if (self.length > 0) checks.fail("creating", `CreateContainer updates "${target}", the container being created`, created.responseJson);
      else checks.ok("creating");
      merge(created, () => {
        const result = new CreateContainerResult(clone(CreateContainerRequestSchema, createRequest));
        result.apply(id, { ...res, update: res.update.filter((u) => u.containerId !== target) } as CreateContainerResponse);
        validateAdjust = result.response();
      });
    }
    if (validateAdjust !== undefined && subscribed("ValidateContainerAdjustment")) {
      await call("validateContainerAdjustment", { pod: pod1, container: ctr1, adjust: validateAdjust.adjust, update: validateAdjust.update, plugins: [{ name: registration!.name, index: registration!.idx }] } as never);
    }
    const running = { ...ctr1, state: ContainerState.CONTAINER_RUNNING };
    await event("postCreateContainer", { pod: pod1, container: ctr1 } as never);
    await event("startContainer", { pod: pod1, container: ctr1 } as never);
    await event("postStartContainer", { pod: pod1, container: running } as never);

    // A runtime restart: the connection goes; a launched plugin must go with it.
    await stillThere();
    restarting = true;
    const old = instance!;
    conn!.close();
    const went = await Promise.race([old.gone, sleep(goneTimeoutMs)]);
    if (went === "timeout" && old.restartable) {
      checks.fail("restart", `the plugin was still running ${goneTimeoutMs} ms after the runtime closed its connection`);
      old.kill();
    }
    await connect("restart");
    restarting = false;
    await configureAndSync([{ pods: [...existing.pods, pod1], containers: [...existing.containers, running] }], "restart");
    checks.ok("restart");

    const updateRequest = create(UpdateContainerRequestSchema, { pod: pod1, container: running, linuxResources: { cpu: { shares: { value: 1024n } } } });
    const updated = await event("updateContainer", clone(UpdateContainerRequestSchema, updateRequest) as never);
    if (updated?.response !== undefined) {
      const res = updated.response as UpdateContainerResponse;
      checkIds(updated, res.update, res.evict.map((e) => e.containerId));
      merge(updated, () => new UpdateContainerResult(clone(UpdateContainerRequestSchema, updateRequest)).apply(id, res));
    }
    await event("postUpdateContainer", { pod: pod1, container: running } as never);
    await event("updatePodSandbox", { pod: pod1, overheadLinuxResources: {}, linuxResources: {} } as never);
    await event("postUpdatePodSandbox", { pod: pod1 } as never);
    const stopped = { ...ctr1, state: ContainerState.CONTAINER_STOPPED };
    const stop = await event("stopContainer", { pod: pod1, container: running } as never);
    if (stop?.response !== undefined) {
      const res = stop.response as StopContainerResponse;
      checkIds(stop, res.update, []);
      merge(stop, () => new StopContainerResult().apply(id, res));
    }
    await event("removeContainer", { pod: pod1, container: stopped } as never);
    await event("stopPodSandbox", { pod: pod1 } as never);
    await event("removePodSandbox", { pod: pod1 } as never);

    const c = conn!;
    await stillThere();
    await call("shutdown", { reason: "nri-wire test-plugin finished its script" } as never, "shutdown");
    // After Shutdown the plugin may go; watch for stray writes until it does or the window ends.
    await Promise.race([instance!.gone, c.mux.closed, sleep(o.shutdownWindowMs ?? 500)]);
    const stray = strayOf.get(c) ?? [];
    if (stray.length > 0) {
      const decoder = new SessionDecoder();
      const records = stray.flatMap((chunk) => decoder.push("p2r", chunk, 0));
      const bytes = stray.reduce((n, s) => n + s.length, 0);
      checks.fail("after-shutdown", `the plugin wrote ${bytes} bytes after answering Shutdown`, records.map((r) => ({ conn: r.conn ?? 0, stream: r.stream ?? 0, method: r.method ?? "", payload: r.payload ?? null })) as JsonValue);
    } else checks.ok("after-shutdown");
  } catch (e) {
    if (!(e instanceof Gone)) throw e;
  } finally {
    if (ended !== undefined) checks.fail("alive", ended);
    else if (registration !== undefined) checks.ok("alive");
    conn?.close();
    instance?.kill();
  }
  for (const c of conns) {
    for (const u of c.unsolicited) {
      for (const up of u.request.update) {
        if (!known.has(up.containerId)) checks.fail("unsolicited", `UpdateContainers after ${u.after || "registration"} updates container "${up.containerId}", which does not exist`);
        else checks.ok("unsolicited");
      }
      for (const ev of u.request.evict) {
        if (!known.has(ev.containerId)) checks.fail("unsolicited", `UpdateContainers after ${u.after || "registration"} evicts container "${ev.containerId}", which does not exist`);
        else checks.ok("unsolicited");
      }
    }
  }
  if (conns.every((c) => c.unsolicited.length === 0)) checks.note("unsolicited", "the plugin sent none");
  checks.note("ids", "the plugin asked for no updates or evictions");
  const results = checks.results();
  const failed = results.some((r) => r.status === "fail");
  const stderr = instances.map((i) => i.stderr?.() ?? "").join("");
  return {
    dialect,
    ...(registration === undefined ? {} : { registration }),
    ...(failed && stderr !== "" ? { stderr } : {}),
    checks: results,
    deprecations,
    passed: results.every((r) => r.status !== "fail"),
  };
}
