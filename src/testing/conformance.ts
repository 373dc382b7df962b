import { type JsonValue, type MessageInitShape, clone, create } from "@bufbuild/protobuf";
import {
  ContainerSchema,
  ContainerState,
  type ContainerUpdate,
  type CreateContainerResponse,
  CreateContainerRequestSchema,
  CreateContainerResponseSchema,
  PodSandboxSchema,
  type StopContainerResponse,
  type UpdateContainerResponse,
  UpdateContainerRequestSchema,
} from "../../gen/v1beta1/api_pb.js";
import { ALL_EVENTS, TEARDOWN_EVENTS, VALID_EVENTS_MASK, eventBit, eventHandlerName, formatEvent } from "../api/events.js";
import { checkPluginIndex, checkPluginName } from "../api/identity.js";
import { CreateContainerResult } from "../runtime/create-result.js";
import { addValidationPlugin, completeValidationRequest, validationRequest } from "../runtime/validation.js";
import { StopContainerResult, UpdateContainerResult } from "../runtime/update-result.js";
import { type Deprecation, stateChangeDeprecation } from "../runtime/deprecation.js";
import { SessionDecoder } from "../capture/session-decoder.js";
import { RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";
import { nriWireVersion } from "../internal/nri-wire-version.js";
import type { PluginInstance, PluginStarter } from "./plugin-starter.js";
import { DEFAULT_SCENARIO, type Scenario } from "./scenario.js";
import { DIALECTS, type Dialect } from "../api/revision.js";
import { oneOf } from "../internal/one-of.js";
import { type CallRecord, type PluginMethodName, ScriptedConnection } from "./scripted-connection.js";
import { PluginGoneError } from "./errors.js";
import { type AnswerOutcome, type Expectation, type Expectations, expectationFor, judge } from "./expectations.js";

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
  answers: "answers each event as the expectations say (--expect)",
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

/** One call of the script and what the plugin answered, judged against its expectation when there is one. */
export interface AnswerRecord {
  /** The v1beta1 method (`CreateContainer`), and what was sent (`nri.pkg.api.v1alpha1.Plugin/StateChange`). */
  readonly method: string;
  readonly wire: string;
  /** The response as protobuf JSON, when the plugin answered. */
  readonly answer?: JsonValue;
  /** Its refusal: the error it answered with, or a validator's rejection reason. */
  readonly refusal?: string;
  /** Why there is no answer at all (a timeout, the plugin gone). */
  readonly lost?: string;
  /** The expectation for the event, and the differences from it (empty: as expected). */
  readonly expected?: Expectation;
  readonly diff?: readonly string[];
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
  /** Every call of the script with its answer, in order. */
  readonly answers: readonly AnswerRecord[];
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
  /** How long a plugin may take to connect, and then to register. Default 5000 ms each. */
  registrationTimeoutMs?: number;
  /** How long a launched plugin may take to exit once a restarting runtime closed its connection. Default 2000 ms. */
  goneTimeoutMs?: number;
  /** How long the runner watches for writes after Shutdown is answered, unless the plugin goes first. Default 500 ms. */
  shutdownWindowMs?: number;
  /** ConfigureRequest.config. Default empty, as with no configuration file. */
  config?: string;
  /** The pods and containers the script is about (see parseScenario). Default DEFAULT_SCENARIO. */
  scenario?: Scenario;
  /** What each event is expected to be answered with (see parseExpectations); the answers check. */
  expectations?: Expectations;
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

/** What a call was answered with: the response, and a refusal (the error's text, or a validator's rejection). */
function outcomeOf(r: CallRecord): AnswerOutcome {
  if (r.error !== undefined) return { refusal: r.error instanceof RpcError ? r.error.rawMessage : r.error.message };
  const answer = r.responseJson ?? {};
  const res = r.response as { reject?: boolean; reason?: string } | undefined;
  if (r.method === "ValidateContainerAdjustment" && res?.reject === true) return { answer, refusal: res.reason === "" || res.reason === undefined ? "unknown rejection reason" : res.reason };
  return { answer };
}

/**
 * Runs the conformance suite: for each dialect, starts the plugin, plays that runtime through
 * registration, Configure, paged Synchronize, the pod and container lifecycle in runtime order
 * with a runtime restart in the middle, and Shutdown, checking every answer against the protocol
 * and against what the runtimes accept. Never throws for the plugin's faults: they are failures
 * in the report.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const dialects = (options.dialects ?? DIALECTS).map((d) => oneOf("test-plugin: dialect", d, DIALECTS));
  const reports: DialectReport[] = [];
  try {
    for (const dialect of dialects) reports.push(await new DialectRun(dialect, options).run());
  } finally {
    await options.starter.close();
  }
  return { plugin: options.starter.description, dialects: reports, passed: reports.every((r) => r.passed) };
}

/** One dialect's run of the script against a plugin: what it has seen and each of its steps. */
class DialectRun {
  private readonly requestTimeoutMs: number;
  private readonly registrationTimeoutMs: number;
  private readonly goneTimeoutMs: number;
  private readonly pod1: Scenario["pod"];
  private readonly ctr1: Scenario["container"];
  private readonly existing: Scenario["existing"];
  private readonly target: string;
  private readonly checks = new Checks();
  private readonly deprecations: Deprecation[] = [];
  private readonly answers: AnswerRecord[] = [];
  private readonly others: Scenario["others"];
  private readonly known: Set<string>;
  private registration: DialectReport["registration"];
  private instance: PluginInstance | undefined;
  private conn: ScriptedConnection | undefined;
  private id = "";
  private mask = 0;
  private restarting = false;
  private ended: string | undefined;
  private readonly conns: ScriptedConnection[] = [];
  private readonly instances: PluginInstance[] = [];
  /** Per connection: settles with why the plugin went, once it went while expected to stay. */
  private readonly lostOf = new WeakMap<ScriptedConnection, Promise<string>>();
  /** Per connection: what the plugin wrote after answering Shutdown. */
  private readonly strayOf = new WeakMap<ScriptedConnection, Uint8Array[]>();

  constructor(
    private readonly dialect: Dialect,
    private readonly o: ConformanceOptions,
  ) {
    this.requestTimeoutMs = o.requestTimeoutMs ?? 2000;
    this.registrationTimeoutMs = o.registrationTimeoutMs ?? 5000;
    this.goneTimeoutMs = o.goneTimeoutMs ?? 2000;
    const scenario = o.scenario ?? DEFAULT_SCENARIO;
    this.pod1 = scenario.pod;
    this.ctr1 = scenario.container;
    this.existing = scenario.existing;
    this.others = scenario.others;
    this.target = this.ctr1.id;
    this.known = new Set(this.existing.containers.map((c) => c.id));
  }

  /** Runs the script and reports. */
  async run(): Promise<DialectReport> {
    try {
      await this.script();
    } catch (e) {
      if (!(e instanceof PluginGoneError)) throw e;
    } finally {
      if (this.ended !== undefined) this.checks.fail("alive", this.ended);
      else if (this.registration !== undefined) this.checks.ok("alive");
      this.conn?.close();
      this.instance?.kill();
    }
    return this.report();
  }

  /** The script, event by event; throws PluginGoneError once the plugin is gone. */
  private async script(): Promise<void> {
    await this.untilRestart();
    await this.restart();
    await this.afterRestart();
    await this.shutdown();
  }

  /** The script's container, running. */
  private get running(): Scenario["container"] {
    return { ...this.ctr1, state: ContainerState.CONTAINER_RUNNING };
  }

  /** Registration, Configure, Synchronize and the pod and container up to running. */
  private async untilRestart(): Promise<void> {
    await this.connect("registration");
    await this.configureAndSync(
      [
        { pods: [...this.existing.pods], containers: [] },
        { pods: [], containers: [...this.existing.containers] },
      ],
      "configure",
    );
    this.checks.ok("synchronize");
    await this.event("runPodSandbox", { pod: this.pod1 } as never);
    this.known.add(this.target);
    await this.createAndValidate();
    const running = this.running;
    await this.event("postCreateContainer", { pod: this.pod1, container: this.ctr1 } as never);
    await this.event("startContainer", { pod: this.pod1, container: this.ctr1 } as never);
    await this.event("postStartContainer", { pod: this.pod1, container: running } as never);
  }

  /**
   * CreateContainer as a runtime with the scenario's other plugins runs it: each plugin in index
   * order is sent the container as adjusted by those before it, the answers merge, and a
   * validator is asked to validate the whole adjustment (whether or not it adjusts itself).
   */
  private async createAndValidate(): Promise<void> {
    const request = create(CreateContainerRequestSchema, { pod: this.pod1, container: this.ctr1 });
    const reg = this.registration!;
    const plugins = [...this.others.map((o) => ({ ...o, self: false })), { name: reg.name, idx: reg.idx, update: [], self: true }].sort((a, b) => a.idx.localeCompare(b.idx) || a.name.localeCompare(b.name));
    // Both adjust the request in place, as the runtime does; the validation request keeps it as sent.
    const merged = new CreateContainerResult(request);
    const validate = validationRequest(request);
    let merges = true;
    let refused = false;
    for (const p of plugins) {
      addValidationPlugin(validate, p.idx, p.name);
      if (!p.self) {
        try {
          merged.apply(`${p.idx}-${p.name}`, create(CreateContainerResponseSchema, { ...(p.adjust === undefined ? {} : { adjust: p.adjust }), update: [...p.update] }));
        } catch (e) {
          this.checks.fail("merge", `CreateContainer: the scenario's plugin ${p.idx}-${p.name}: ${(e as Error).message}`);
          merges = false;
        }
        continue;
      }
      if (!merges) continue;
      const created = await this.event("createContainer", clone(CreateContainerRequestSchema, request) as never);
      if (created?.error !== undefined) refused = true;
      if (created?.response === undefined) continue;
      const res = created.response as CreateContainerResponse;
      this.checkIds(created, res.update, res.evict.map((e) => e.containerId));
      const self = res.update.filter((u) => u.containerId === this.target);
      if (self.length > 0) this.checks.fail("creating", `CreateContainer updates "${this.target}", the container being created`, created.responseJson);
      else this.checks.ok("creating");
      merges = this.merge(created, () => merged.apply(this.id, { ...res, update: res.update.filter((u) => u.containerId !== this.target) } as CreateContainerResponse));
    }
    // A refused or conflicting CreateContainer fails the event: the runtime validates nothing.
    if (!merges || refused || !this.subscribed("validateContainerAdjustment")) return;
    completeValidationRequest(validate, merged);
    await this.call("validateContainerAdjustment", validate as never);
  }

  /** A runtime restart: the connection goes; a launched plugin must go with it; it registers again. */
  private async restart(): Promise<void> {
    await this.stillThere();
    this.restarting = true;
    const old = this.instance!;
    this.conn!.close();
    // A plugin the runtime launched goes with its connection; one on a socket reconnects.
    if (old.restartable && (await Promise.race([old.gone, sleep(this.goneTimeoutMs)])) === "timeout") {
      this.checks.fail("restart", `the plugin was still running ${this.goneTimeoutMs} ms after the runtime closed its connection`);
      old.kill();
    }
    await this.connect("restart");
    this.restarting = false;
    await this.configureAndSync([{ pods: [...this.existing.pods, this.pod1], containers: [...this.existing.containers, this.running] }], "restart");
    this.checks.ok("restart");
  }

  /** Updates, then the container and the pod stopped and removed. */
  private async afterRestart(): Promise<void> {
    const running = this.running;
    const updateRequest = create(UpdateContainerRequestSchema, { pod: this.pod1, container: running, linuxResources: { cpu: { shares: { value: 1024n } } } });
    const updated = await this.event("updateContainer", clone(UpdateContainerRequestSchema, updateRequest) as never);
    if (updated?.response !== undefined) {
      const res = updated.response as UpdateContainerResponse;
      this.checkIds(updated, res.update, res.evict.map((e) => e.containerId));
      this.merge(updated, () => new UpdateContainerResult(clone(UpdateContainerRequestSchema, updateRequest)).apply(this.id, res));
    }
    await this.event("postUpdateContainer", { pod: this.pod1, container: running } as never);
    await this.event("updatePodSandbox", { pod: this.pod1, overheadLinuxResources: {}, linuxResources: {} } as never);
    await this.event("postUpdatePodSandbox", { pod: this.pod1 } as never);
    const stopped = { ...this.ctr1, state: ContainerState.CONTAINER_STOPPED };
    const stop = await this.event("stopContainer", { pod: this.pod1, container: running } as never);
    if (stop?.response !== undefined) {
      const res = stop.response as StopContainerResponse;
      this.checkIds(stop, res.update, []);
      this.merge(stop, () => new StopContainerResult().apply(this.id, res));
    }
    await this.event("removeContainer", { pod: this.pod1, container: stopped } as never);
    await this.event("stopPodSandbox", { pod: this.pod1 } as never);
    await this.event("removePodSandbox", { pod: this.pod1 } as never);
  }

  /** Shutdown, and nothing written after its answer. */
  private async shutdown(): Promise<void> {
    const c = this.conn!;
    await this.stillThere();
    await this.call("shutdown", { reason: "nri-wire test-plugin finished its script" } as never, "shutdown");
    // After Shutdown the plugin may go; watch for stray writes until it does or the window ends.
    await Promise.race([this.instance!.gone, c.mux.closed, sleep(this.o.shutdownWindowMs ?? 500)]);
    const stray = this.strayOf.get(c) ?? [];
    if (stray.length > 0) {
      const decoder = new SessionDecoder();
      const records = stray.flatMap((chunk) => decoder.push("p2r", chunk, 0));
      const bytes = stray.reduce((n, s) => n + s.length, 0);
      this.checks.fail("after-shutdown", `the plugin wrote ${bytes} bytes after answering Shutdown`, records.map((r) => ({ conn: r.conn ?? 0, stream: r.stream ?? 0, method: r.method ?? "", payload: r.payload ?? null })) as JsonValue);
    } else this.checks.ok("after-shutdown");
  }

  /** The unsolicited updates' checks and the report. */
  private report(): DialectReport {
  for (const c of this.conns) {
    for (const u of c.unsolicited) {
      for (const up of u.request.update) {
        if (!this.known.has(up.containerId)) this.checks.fail("unsolicited", `UpdateContainers after ${u.after || "registration"} updates container "${up.containerId}", which does not exist`);
        else this.checks.ok("unsolicited");
      }
      for (const ev of u.request.evict) {
        if (!this.known.has(ev.containerId)) this.checks.fail("unsolicited", `UpdateContainers after ${u.after || "registration"} evicts container "${ev.containerId}", which does not exist`);
        else this.checks.ok("unsolicited");
      }
    }
  }
  if (this.conns.every((c) => c.unsolicited.length === 0)) this.checks.note("unsolicited", "the plugin sent none");
  this.checks.note("ids", "the plugin asked for no updates or evictions");
  this.checks.note("answers", this.o.expectations === undefined ? "no expectations given" : "no expected event was answered");
  const results = this.checks.results();
  const failed = results.some((r) => r.status === "fail");
  const stderr = this.instances.map((i) => i.stderr?.() ?? "").join("");
  return {
    dialect: this.dialect,
    ...(this.registration === undefined ? {} : { registration: this.registration }),
    ...(failed && stderr !== "" ? { stderr } : {}),
    checks: results,
    deprecations: this.deprecations,
    answers: this.answers,
    passed: results.every((r) => r.status !== "fail"),
  };
  }

  /** Starts an this.instance and waits for its this.registration; the check that a failure belongs to is `check`. */
  private async connect(check: "registration" | "restart"): Promise<void> {
    try {
      this.instance = await this.o.starter.start(this.registrationTimeoutMs);
    } catch (e) {
      this.checks.fail(check, `the plugin did not connect: ${(e as Error).message}`);
      throw new PluginGoneError();
    }
    const inst = this.instance;
    const c = new ScriptedConnection(inst.socket, {
      dialect: this.dialect,
      onUpdateContainers: () => [],
      onDeprecation: (method) => this.deprecations.push(stateChangeDeprecation(this.id, method)),
    });
    this.conn = c;
    this.conns.push(c);
    // Anything the plugin writes after answering Shutdown is kept, to be decoded for the report.
    const stray: Uint8Array[] = [];
    inst.socket.on("data", (d: Uint8Array) => {
      if (c.shutdownAnswered) stray.push(d);
    });
    this.strayOf.set(c, stray);
    this.instances.push(inst);
    // Whether the plugin going is a fault is decided when it goes (not during a restart, nor
    // after Shutdown); for a process, its exit status says more than its connection's end.
    const unexpected = (): boolean => !this.restarting && !c.shutdownAnswered;
    const lost = Promise.race([inst.gone.then((why) => ({ why, fault: unexpected() })), c.mux.closed.then(() => ({ why: undefined, fault: unexpected() }))]).then(async ({ why, fault }) => {
      if (!fault) return new Promise<string>(() => undefined);
      const said = why ?? (await Promise.race([inst.gone, sleep(this.goneTimeoutMs).then(() => "closed its connection")]));
      this.ended ??= `plugin ${said}`;
      return this.ended;
    });
    this.lostOf.set(c, lost);
    const reg = await Promise.race([c.registered.catch(() => "closed its connection"), sleep(this.registrationTimeoutMs), inst.gone]);
    if (typeof reg === "string") {
      this.checks.fail(check, reg === "timeout" ? `the plugin did not register within ${this.registrationTimeoutMs} ms` : `the plugin ${reg} before registering`);
      throw new PluginGoneError();
    }
    this.id = `${reg.idx}-${reg.name}`;
    this.registration = { name: reg.name, idx: reg.idx, version: reg.revision };
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
    const want = this.o.starter.expected;
    // Most often the plugin's own options, which win over NRI_PLUGIN_NAME and NRI_PLUGIN_IDX.
    if (want?.name !== undefined && want.name !== reg.name) bad.push(`registered as "${reg.name}", started as "${want.name}" (a name the plugin sets itself wins over NRI_PLUGIN_NAME: run test-plugin with --name ${reg.name})`);
    if (want?.idx !== undefined && want.idx !== reg.idx) bad.push(`registered with index "${reg.idx}", started with "${want.idx}" (an index the plugin sets itself wins over NRI_PLUGIN_IDX: run test-plugin with --idx ${reg.idx})`);
    // A bad name is a this.registration fault whenever it shows.
    for (const b of bad) this.checks.fail("registration", b);
    this.checks.ok(check);
  }


  /** Before the runner ends the connection itself: the plugin must still be there a while after its last answer. */
  private async stillThere(): Promise<void> {
    await Promise.race([this.lostOf.get(this.conn!), sleep(this.o.aliveWindowMs ?? 200)]);
    if (this.ended !== undefined) throw new PluginGoneError();
  }

  /** One call with the checks every answer gets; throws PluginGoneError once the plugin is gone. */
  private async call<K extends PluginMethodName>(method: K, request: MessageInitShape<never>, failAs?: CheckId): Promise<CallRecord> {
    if (this.ended !== undefined) throw new PluginGoneError();
    const r = await this.conn!.call(method, request as never, this.requestTimeoutMs);
    // A call cut off by the plugin going is the alive check's failure, not the call's.
    if (r.error !== undefined && this.conn!.mux.closeReason !== undefined && !this.restarting) {
      this.ended ??= "plugin closed its connection";
      this.answers.push({ method: r.method, wire: r.wire, lost: "the plugin closed its connection" });
      throw new PluginGoneError();
    }
    const where = `${r.method} (sent as ${r.wire})`;
    const timedOut = r.error instanceof RpcError && r.error.code === Code.DEADLINE_EXCEEDED;
    if (timedOut || r.ms > this.requestTimeoutMs) this.checks.fail("timeouts", `${where} took ${timedOut ? "longer than" : Math.round(r.ms)} ${timedOut ? `${this.requestTimeoutMs} ms` : `ms, over the ${this.requestTimeoutMs} ms timeout`}`);
    else this.checks.ok("timeouts");
    const n = this.answers.filter((a) => a.method === r.method).length;
    const expected = expectationFor(this.o.expectations, r.method, n);
    const outcome = timedOut ? undefined : outcomeOf(r);
    const diff = expected === undefined || outcome === undefined ? undefined : judge(expected, outcome);
    this.answers.push({ method: r.method, wire: r.wire, ...outcome, ...(timedOut ? { lost: `no answer within ${this.requestTimeoutMs} ms` } : {}), ...(expected === undefined ? {} : { expected, ...(diff === undefined ? {} : { diff }) }) });
    if (diff !== undefined) {
      if (diff.length === 0) this.checks.ok("answers");
      else this.checks.fail("answers", `${where} was answered otherwise than expected:\n${diff.map((l) => `  ${l}`).join("\n")}`, r.responseJson);
    }
    const check = failAs ?? (TEARDOWN.includes(r.method) ? "teardown" : "events");
    if (r.error !== undefined && !timedOut) {
      // A refusal the expectations ask for is the plugin doing its job.
      if (expected !== undefined && "refusal" in expected) this.checks.ok(check);
      else this.checks.fail(check, `${where} failed: ${r.error.message}`);
    } else if (r.error === undefined) {
      this.checks.ok(check);
      if (r.unknownFields !== undefined) {
        this.checks.fail("adjustments", `${where} answered with field${r.unknownFields.length > 1 ? "s" : ""} ${r.unknownFields.join(", ")}, which ${r.method}Response does not have`, r.responseJson);
      } else this.checks.ok("adjustments");
    }
    return r;
  }

  /** Whether the plugin subscribed to the event of handler `method` (every other call is always sent). */
  private subscribed(method: PluginMethodName): boolean {
    const e = ALL_EVENTS.find((ev) => eventHandlerName(ev) === method);
    return e === undefined || (this.mask & eventBit(e)) !== 0;
  }

  private checkIds(r: CallRecord, updates: readonly ContainerUpdate[], evicted: readonly string[]): void {
    for (const u of updates) {
      if (!this.known.has(u.containerId)) this.checks.fail("ids", `${r.method} updates container "${u.containerId}", which does not exist`, r.responseJson);
      else this.checks.ok("ids");
    }
    for (const e of evicted) {
      if (!this.known.has(e)) this.checks.fail("ids", `${r.method} evicts container "${e}", which does not exist`, r.responseJson);
      else this.checks.ok("ids");
    }
  }

  /** Runs a merge; whether it merged (a conflict fails the merge check). */
  private merge(r: CallRecord, run: () => void): boolean {
    try {
      run();
      this.checks.ok("merge");
      return true;
    } catch (e) {
      this.checks.fail("merge", `${r.method}: ${(e as Error).message}`, r.responseJson);
      return false;
    }
  }

  private async configureAndSync(pages: { pods: MessageInitShape<typeof PodSandboxSchema>[]; containers: MessageInitShape<typeof ContainerSchema>[] }[], check: "configure" | "restart"): Promise<void> {
    const conf = await this.call(
      "configure",
      {
        config: this.o.config ?? "",
        runtimeName: "nri-wire-test-plugin",
        runtimeVersion: `v${nriWireVersion()}`,
        registrationTimeout: BigInt(this.registrationTimeoutMs),
        requestTimeout: BigInt(this.requestTimeoutMs),
        NRIVersion: this.dialect === "statechange" ? "v0.11.0" : "v0.12.5",
      } as never,
      check,
    );
    if (conf.error !== undefined) throw new PluginGoneError();
    const events = (conf.response as { events?: number } | undefined)?.events ?? 0;
    if ((events & ~VALID_EVENTS_MASK) !== 0) {
      this.checks.fail(check, `Configure asked for events 0x${(events >>> 0).toString(16)}, beyond the valid 0x${VALID_EVENTS_MASK.toString(16)}`, conf.responseJson);
      throw new PluginGoneError();
    }
    this.mask = events === 0 ? VALID_EVENTS_MASK : events;
    for (const [i, page] of pages.entries()) {
      const more = i < pages.length - 1;
      const r = await this.call("synchronize", { ...page, more } as never, check === "restart" ? "restart" : "synchronize");
      if (r.error !== undefined) throw new PluginGoneError();
      const res = r.response as unknown as { more: boolean; update: ContainerUpdate[] };
      if (more && !res.more) this.checks.fail(check === "restart" ? "restart" : "synchronize", `Synchronize page ${i + 1} of ${pages.length} was answered with more = false`, r.responseJson);
      if (more && res.update.length > 0) this.checks.fail(check === "restart" ? "restart" : "synchronize", `Synchronize page ${i + 1} of ${pages.length} was answered with updates before the last page`, r.responseJson);
      this.checkIds(r, res.update, []);
    }
  }

  private async event(method: PluginMethodName, request: MessageInitShape<never>): Promise<CallRecord | undefined> {
    if (!this.subscribed(method)) return undefined;
    return this.call(method, request);
  }
}
