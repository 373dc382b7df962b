/**
 * The TypeScript twin of `diff-peer runtime` (test/interop/diff-peer/runtime.go): runs one
 * differential scenario on nri-wire's runtime with the same scripted Go plugin processes and
 * gives the same canonical lines (DIFF.md). The test calls `runScenario` in its own process; as
 * a command it prints the lines:
 *
 *   node --import tsx test/interop/diff-runtime.ts --scenario FILE --work DIR --plugin DIFF_PEER
 */
import { type DescMessage, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import {
  type ContainerUpdate,
  ContainerAdjustmentSchema,
  ContainerSchema,
  ContainerUpdateSchema,
  CreateContainerRequestSchema,
  CreateContainerResponseSchema,
  PodSandboxSchema,
  PostCreateContainerRequestSchema,
  PostStartContainerRequestSchema,
  PostUpdateContainerRequestSchema,
  PostUpdatePodSandboxRequestSchema,
  RemoveContainerRequestSchema,
  RemovePodSandboxRequestSchema,
  RunPodSandboxRequestSchema,
  StartContainerRequestSchema,
  StopContainerRequestSchema,
  StopContainerResponseSchema,
  StopPodSandboxRequestSchema,
  UpdateContainerRequestSchema,
  UpdateContainerResponseSchema,
  UpdatePodSandboxRequestSchema,
  UpdatePodSandboxResponseSchema,
} from "../../gen/v1beta1/api_pb.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { canonicalJson } from "./diff-lines.js";
import type { External, Json, Scenario, Script, Step } from "./diff-scenarios.js";

const RUNTIME_NAME = "nri-wire-diff";
const RUNTIME_VERSION = "0.0.1";
/** How long any one wait may take before the run is declared stuck. */
const STEP_LIMIT_MS = 20_000;

function fail(message: string): never {
  throw new Error(`diff-runtime: ${message}`);
}

function parse<D extends DescMessage>(schema: D, json: unknown): ReturnType<typeof fromJson<D>> {
  return fromJson(schema, (json ?? {}) as JsonValue);
}

/** Waits for `p` or fails the run after STEP_LIMIT_MS. */
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`diff-runtime: ${what}`)), STEP_LIMIT_MS);
  });
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

interface ExtPlugin {
  id: string;
  child: ChildProcess;
  acks: (() => void)[];
  exited: Promise<number | null>;
}

/** A one-shot signal that can be awaited before or after it fires. */
class Signal<T = void> {
  readonly promise: Promise<T>;
  resolve!: (v: T) => void;
  constructor() {
    this.promise = new Promise<T>((r) => (this.resolve = r));
  }
}

class Driver {
  readonly lines: string[] = [];
  private readonly plugins: ExtPlugin[] = [];
  private readonly records: string[] = [];
  private readonly closed = new Map<string, Signal>();
  private syncTag = "preinstalled";
  /** What the runtime logged, by level, for the "log" lines `finish` prints. */
  private readonly logs: Record<"error" | "warn" | "info", string[]> = { error: [], warn: [], info: [] };
  private synced = new Signal<Error | undefined>();
  private runtime: NriRuntime | undefined;

  constructor(
    private readonly sc: Scenario,
    private readonly work: string,
    private readonly peer: string,
  ) {}

  private get rt(): NriRuntime {
    return this.runtime ?? fail("no runtime yet");
  }

  private emit(v: unknown): void {
    this.lines.push(canonicalJson(v));
  }

  private path(...elem: string[]): string {
    return join(this.work, ...elem);
  }

  private closedSignal(id: string): Signal {
    let s = this.closed.get(id);
    if (!s) this.closed.set(id, (s = new Signal()));
    return s;
  }

  /** The runtime logs what Go logs; a plugin connection going away is the signal a kill waits for. */
  private onInfo = (message: string): void => {
    this.logs.info.push(message.replaceAll(this.work, "<work>"));
    const m = /^connection to plugin "(.*)" closed$/.exec(message);
    if (m) this.closedSignal(m[1]!).resolve();
    if (process.env.DIFF_PEER_LOG) process.stderr.write(`[diff-runtime] info: ${message}\n`);
  };

  async run(): Promise<void> {
    const pluginDir = this.preparePluginDir();
    const pods = (this.sc.state?.pods ?? []).map((p) => parse(PodSandboxSchema, p));
    const containers = (this.sc.state?.containers ?? []).map((c) => parse(ContainerSchema, c));
    const log = (level: "warn" | "error") => (message: string) => {
      this.logs[level].push(message.replaceAll(this.work, "<work>"));
      if (process.env.DIFF_PEER_LOG) process.stderr.write(`[diff-runtime] ${level}: ${message}\n`);
    };
    this.runtime = new NriRuntime({
      name: RUNTIME_NAME,
      version: RUNTIME_VERSION,
      socketPath: this.path("nri.sock"),
      pluginPath: pluginDir,
      pluginConfigPath: this.path("conf.d"),
      ...(this.sc.registrationTimeoutMs ? { registrationTimeoutMs: this.sc.registrationTimeoutMs } : {}),
      ...(this.sc.requestTimeoutMs ? { requestTimeoutMs: this.sc.requestTimeoutMs } : {}),
      ...(this.sc.defaultValidator ? { defaultValidator: this.sc.defaultValidator } : {}),
      synchronize: async (sync) => {
        if (this.sc.syncError !== undefined) throw new Error(this.sc.syncError);
        let updates: ContainerUpdate[];
        try {
          updates = await sync(pods, containers);
        } catch (e) {
          const err = e instanceof Error ? e : new Error(String(e));
          this.emit({ sync: this.syncTag, error: err.message });
          this.synced.resolve(err);
          throw err;
        }
        this.emit({ sync: this.syncTag, update: updates.map((u) => toJson(ContainerUpdateSchema, u)) });
        this.synced.resolve(undefined);
      },
      updateContainers: (updates) => {
        this.emit({ updateFn: updates.map((u) => toJson(ContainerUpdateSchema, u)) });
        const failed = (this.sc.updateFn?.failed ?? []).map((u) => parse(ContainerUpdateSchema, u));
        if (this.sc.updateFn?.error) throw new Error(this.sc.updateFn.error);
        return failed;
      },
      log: { info: this.onInfo, warn: log("warn"), error: log("error") },
      // The Go driver's recordingMetrics, line for line.
      metrics: {
        recordPluginInvocation: (plugin, op, err) => this.emit({ metric: "invocation", plugin, op, error: err?.message }),
        recordPluginLatency: (plugin, op, ms) => {
          if (!(ms >= 0)) throw new Error(`diff-runtime: latency ${ms} for ${plugin} ${op}`);
          this.emit({ metric: "latency", plugin, op });
        },
        recordPluginAdjustments: (plugin, op, adjust, updates, evicts) =>
          this.emit({ metric: "adjustments", plugin, op, updates, evicts, adjust: adjust === undefined ? undefined : toJson(ContainerAdjustmentSchema, adjust) }),
        updatePluginCount: (count) => this.emit({ metric: "count", count }),
      },
    });
    try {
      await this.rt.start();
    } catch (e) {
      this.emit({ start: { error: (e instanceof Error ? e.message : String(e)).replaceAll(this.work, "<work>") } });
      await this.finish();
      return;
    }
    this.synced = new Signal();
    for (const e of this.sc.plugins ?? []) await this.connect(e);
    for (const step of this.sc.steps) await this.step(step);
    await this.finish();
  }

  /** The same plugin and configuration directories as the Go driver writes. */
  private preparePluginDir(): string {
    for (const d of ["scripts", "records", "conf.d"]) mkdirSync(this.path(d), { recursive: true });
    for (const [name, content] of Object.entries(this.sc.conf ?? {})) writeFileSync(this.path("conf.d", name), content, { mode: 0o644 });
    if (!this.sc.preinstalled?.length && !this.sc.pluginFiles?.length) return this.path("no-plugins");
    const dir = this.path("plugins");
    mkdirSync(dir, { recursive: true });
    for (const f of this.sc.pluginFiles ?? []) writeFileSync(join(dir, f.name), f.content, { mode: f.executable ? 0o755 : 0o644 });
    for (const p of this.sc.preinstalled ?? []) {
      const script = this.writeScript(p.file, p.script);
      writeFileSync(join(dir, p.file), `#!/bin/sh\nexec ${JSON.stringify(this.peer)} plugin --script ${JSON.stringify(script)} --record ${JSON.stringify(this.recordPath(p.file))}\n`, { mode: 0o755 });
      this.records.push(p.file);
    }
    return dir;
  }

  private writeScript(id: string, s: Script): string {
    const p = this.path("scripts", `${id}.json`);
    writeFileSync(p, JSON.stringify(s));
    return p;
  }

  private recordPath(id: string): string {
    return this.path("records", `${id}.jsonl`);
  }

  private openPlugins(): number {
    return this.rt.plugins.filter((p) => !p.closed).length;
  }

  /** Starts an external plugin; waits until it is synchronized and in place, or its process ended. */
  private async connect(e: External): Promise<void> {
    const id = `${e.idx}-${e.name}`;
    const script = this.writeScript(id, e.script);
    const before = this.openPlugins();
    this.syncTag = id;
    const child = spawn(this.peer, ["plugin", "--script", script, "--record", this.recordPath(id), "--socket", this.path("nri.sock"), "--name", e.name, "--idx", e.idx], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const p: ExtPlugin = { id, child, acks: [], exited: new Promise((r) => child.on("exit", (code) => r(code))) };
    this.plugins.push(p);
    this.records.push(id);
    createInterface({ input: child.stdout! }).on("line", () => p.acks.shift()?.());

    const outcome = await within(
      Promise.race([this.synced.promise.then((err) => ({ synced: err })), p.exited.then((code) => ({ exited: code }))]),
      `plugin ${id} neither synchronized nor exited`,
    );
    this.synced = new Signal();
    if ("exited" in outcome) {
      this.emit({ plugin: id, exited: true });
    } else if (outcome.synced === undefined) {
      await within(this.rt.waitForPlugins(before + 1, STEP_LIMIT_MS), `plugin ${id} was synchronized but never joined`);
      // What the runtime does as the plugin joins (its second plugin count) ends in the same turn.
      await new Promise((r) => setImmediate(r));
      this.emit({ plugin: id, registered: true });
    } else {
      await within(p.exited, `plugin ${id} did not exit after a failed synchronization`);
      this.emit({ plugin: id, exited: true });
    }
  }

  private find(id: string): ExtPlugin {
    return this.plugins.find((p) => p.id === id) ?? fail(`no external plugin ${id}`);
  }

  private async step(s: Step): Promise<void> {
    if ("event" in s) return this.event(s.event, s.request);
    if ("kill" in s) {
      const p = this.find(s.kill);
      const closed = this.closedSignal(s.kill);
      p.child.kill("SIGKILL");
      await p.exited;
      await within(closed.promise, `runtime did not notice plugin ${s.kill} going away`);
      return this.emit({ plugin: s.kill, killed: true });
    }
    if ("unsolicited" in s) {
      const p = this.find(s.unsolicited);
      const ack = new Promise<void>((r) => p.acks.push(r));
      p.child.stdin!.write(`${JSON.stringify({ unsolicited: s.update })}\n`);
      await within(ack, `plugin ${s.unsolicited} did not acknowledge`);
      return;
    }
    return this.connect(s.connect);
  }

  /** Runs one lifecycle event and prints its outcome. */
  private async event(name: string, raw: Json): Promise<void> {
    const r = this.rt;
    const events: Record<string, () => Promise<unknown>> = {
      RunPodSandbox: () => r.runPodSandbox(parse(RunPodSandboxRequestSchema, raw)),
      UpdatePodSandbox: async () => toJson(UpdatePodSandboxResponseSchema, await r.updatePodSandbox(parse(UpdatePodSandboxRequestSchema, raw))),
      PostUpdatePodSandbox: () => r.postUpdatePodSandbox(parse(PostUpdatePodSandboxRequestSchema, raw)),
      StopPodSandbox: () => r.stopPodSandbox(parse(StopPodSandboxRequestSchema, raw)),
      RemovePodSandbox: () => r.removePodSandbox(parse(RemovePodSandboxRequestSchema, raw)),
      CreateContainer: async () => toJson(CreateContainerResponseSchema, await r.createContainer(parse(CreateContainerRequestSchema, raw))),
      PostCreateContainer: () => r.postCreateContainer(parse(PostCreateContainerRequestSchema, raw)),
      StartContainer: () => r.startContainer(parse(StartContainerRequestSchema, raw)),
      PostStartContainer: () => r.postStartContainer(parse(PostStartContainerRequestSchema, raw)),
      UpdateContainer: async () => toJson(UpdateContainerResponseSchema, await r.updateContainer(parse(UpdateContainerRequestSchema, raw))),
      PostUpdateContainer: () => r.postUpdateContainer(parse(PostUpdateContainerRequestSchema, raw)),
      StopContainer: async () => toJson(StopContainerResponseSchema, await r.stopContainer(parse(StopContainerRequestSchema, raw))),
      RemoveContainer: () => r.removeContainer(parse(RemoveContainerRequestSchema, raw)),
    };
    const call = events[name] ?? fail(`unknown event ${JSON.stringify(name)}`);
    try {
      const response = await call();
      this.emit(response === undefined ? { event: name } : { event: name, response });
    } catch (e) {
      this.emit({ event: name, error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** Stops whatever a failed run left behind. */
  async abandon(): Promise<void> {
    for (const p of this.plugins) p.child.kill("SIGKILL");
    await this.runtime?.stop().catch(() => undefined);
  }

  /** Stops the runtime and every plugin, then prints each plugin's record and, per level, what the runtime logged (sorted, as the Go driver prints it). */
  private async finish(): Promise<void> {
    await this.rt.stop();
    for (const p of this.plugins) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
    for (const id of this.records) {
      let text: string;
      try {
        text = readFileSync(this.recordPath(id), "utf8");
      } catch {
        continue;
      }
      for (const line of text.split("\n")) if (line !== "") this.emit({ plugin: id, record: JSON.parse(line) as unknown });
    }
    for (const level of ["error", "warn", "info"] as const) this.emit({ log: level, lines: [...this.logs[level]].sort() });
  }
}

/** Runs `scenario` on nri-wire's runtime in `work` (an empty directory), starting `peer` as the plugin. */
export async function runScenario(scenario: Scenario, work: string, peer: string): Promise<string[]> {
  const d = new Driver(scenario, work, peer);
  try {
    await d.run();
  } catch (e) {
    await d.abandon();
    throw e;
  }
  return d.lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { scenario: { type: "string" }, work: { type: "string" }, plugin: { type: "string" } } });
  if (!values.scenario || !values.work || !values.plugin) fail("usage: diff-runtime.ts --scenario FILE --work DIR --plugin DIFF_PEER");
  const scenario = JSON.parse(readFileSync(values.scenario, "utf8")) as Scenario;
  for (const line of await runScenario(scenario, values.work, values.plugin)) process.stdout.write(`${line}\n`);
  process.exit(0);
}
