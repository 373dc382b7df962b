import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Container,
  ContainerSchema,
  type ContainerUpdate,
  type CreateContainerResponse,
  type LinuxResources,
  LinuxResourcesSchema,
  type PodSandbox,
  PodSandboxSchema,
  type StopContainerResponse,
  type UpdateContainerResponse,
  type UpdatePodSandboxResponse,
} from "../../gen/v1beta1/api_pb.js";
import { eventBit, eventOfMethod } from "../api/events.js";
import type { PluginHandlers } from "../api/handlers.js";
import type { Logger } from "../api/logger.js";
import { NriPlugin } from "../plugin/plugin.js";
import type { PluginOptions } from "../plugin/options.js";
import { type Loose, toMessage } from "../api/loose.js";
import { NriRuntime } from "../runtime/nri-runtime.js";
import type { Deprecation } from "../runtime/deprecation.js";
import type { DefaultValidatorConfig } from "../runtime/default-validator.js";
import type { PluginInfo } from "../runtime/runtime-plugin.js";
import { SocketRelay } from "./socket-relay.js";

/** A pod as a test writes it: the message, or a plain object whose 64-bit values may be numbers. */
export type TestPod = Loose<PodSandbox>;
/** A container as a test writes it. */
export type TestContainer = Loose<Container>;
/** Linux resources as a test writes them (`memory: { limit: 1 << 30 }`). */
export type TestResources = Loose<LinuxResources>;

/** Options of a TestRuntime. */
export interface TestRuntimeOptions {
  /** Pods and containers new plugins are synchronized with. Default none. */
  pods?: TestPod[];
  containers?: TestContainer[];
  /** The Go runtime's defaults: 2000 ms per request, 5000 ms to register. */
  requestTimeoutMs?: number;
  registrationTimeoutMs?: number;
  /** ConfigureRequest.config for each plugin: one text for all, or per plugin. Default empty. */
  config?: string | ((plugin: { readonly name: string; readonly idx: string }) => string);
  /** The builtin default validator, as containerd configures it. */
  defaultValidator?: DefaultValidatorConfig;
  /** Where the runtime reports what the Go runtime logs; default, as NriRuntime's: warnings and errors to stderr. */
  log?: Partial<Logger>;
}

/** Options of TestRuntime.startPlugin: a plugin's options but where it connects. */
export type TestPluginOptions = Omit<PluginOptions, "socketPath" | "socket">;

/** An unsolicited UpdateContainers a plugin sent, as the test runtime received it. */
export interface ReceivedUpdate {
  readonly plugin: string;
  readonly update: readonly ContainerUpdate[];
}

/**
 * An in-process NRI runtime for plugin tests: it listens on a private socket, and each event
 * method relays the event to the connected plugins and resolves with their answers merged exactly
 * as containerd/nri's Go runtime merges them (or rejects with the Go runtime's error text).
 *
 * It fails loudly rather than test nothing: an event first waits until every plugin connected
 * to its socket is registered and synchronized, and rejects when none is connected, when one
 * does not get there within the registration and request timeouts, or when no registered plugin
 * subscribes to the event. Requests take 64-bit values as numbers or bigints; answers hold them
 * as bigints, as the generated types do.
 *
 * ```ts
 * const runtime = await TestRuntime.start();
 * await runtime.startPlugin(handlers, { name: "mine", idx: "10" });
 * const { adjust } = await runtime.createContainer({ id: "pod0" }, { id: "ctr0", podSandboxId: "pod0" });
 * await runtime.stop();
 * ```
 */
export class TestRuntime {
  /** Settles once the runtime has stopped. */
  readonly closed: Promise<void>;
  private settleClosed!: () => void;
  private readonly started: NriPlugin[] = [];

  private constructor(
    /** Every unsolicited update plugins sent, in order (all are reported as applied). */
    readonly updates: readonly ReceivedUpdate[],
    /** The runtime underneath: its events relay without the test runtime's checks. */
    readonly runtime: NriRuntime,
    private readonly relay: SocketRelay,
    private readonly dir: string,
    /** How long an event waits for connected plugins to be listed. */
    private readonly waitMs: number,
  ) {
    this.closed = new Promise((r) => (this.settleClosed = r));
  }

  /** Starts a runtime on a fresh socket in a temporary directory. */
  static async start(options: TestRuntimeOptions = {}): Promise<TestRuntime> {
    const dir = mkdtempSync(join(tmpdir(), "nri-test-"));
    const inner = join(dir, "runtime.sock");
    const updates: ReceivedUpdate[] = [];
    const log = options.log;
    const config = options.config;
    const runtime = new NriRuntime({
      name: "nri-wire-test-runtime",
      version: "v0.1.0",
      socketPath: inner,
      pluginPath: join(dir, "no-plugins"),
      pluginConfigPath: join(dir, "no-config"),
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.registrationTimeoutMs === undefined ? {} : { registrationTimeoutMs: options.registrationTimeoutMs }),
      ...(options.defaultValidator === undefined ? {} : { defaultValidator: options.defaultValidator }),
      ...(config === undefined ? {} : { externalPluginConfig: typeof config === "string" ? () => config : config }),
      synchronize: async (sync) =>
        void (await sync(
          (options.pods ?? []).map((p) => toMessage(PodSandboxSchema, p)),
          (options.containers ?? []).map((c) => toMessage(ContainerSchema, c)),
        )),
      updateContainers: (update, source) => {
        updates.push({ plugin: source.plugin, update });
        return [];
      },
      ...(log === undefined ? {} : { log }),
    });
    let relay: SocketRelay | undefined;
    try {
      await runtime.start();
      relay = await SocketRelay.listen(join(dir, "nri.sock"), inner);
    } catch (e) {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    // Registration, then Configure and Synchronize, each within its timeout.
    const waitMs = (options.registrationTimeoutMs ?? 5000) + 2 * (options.requestTimeoutMs ?? 2000);
    return new TestRuntime(updates, runtime, relay, dir, waitMs);
  }

  /** The socket a plugin connects to. */
  get socketPath(): string {
    return this.relay.path;
  }

  /** Registered plugins, in the order events reach them. */
  get plugins(): readonly PluginInfo[] {
    return this.runtime.plugins;
  }

  /** Deprecations recorded for old plugins (StateChange fallbacks). */
  get deprecations(): readonly Deprecation[] {
    return this.runtime.deprecations;
  }

  /**
   * Starts a plugin with `handlers` on this runtime's socket and resolves once the runtime lists
   * it (registered, configured and synchronized); rejects when it does not get there.
   */
  async startPlugin(handlers: PluginHandlers, options: TestPluginOptions = {}): Promise<NriPlugin> {
    const plugin = new NriPlugin(handlers, { ...options, socketPath: this.socketPath });
    this.started.push(plugin);
    await plugin.start();
    await this.settled("startPlugin");
    return plugin;
  }

  /** Resolves once `n` plugins are registered, configured and synchronized. */
  waitForPlugins(n = 1, timeoutMs = this.waitMs): Promise<void> {
    return this.runtime.waitForPlugins(n + this.builtins(), timeoutMs);
  }

  private builtins(): number {
    return this.runtime.plugins.filter((p) => p.kind === "builtin" && !p.closed).length;
  }

  private listed(): PluginInfo[] {
    return this.runtime.plugins.filter((p) => p.kind !== "builtin" && !p.closed);
  }

  /** Waits until every plugin connected to the socket is listed; `what` names the caller in the error. */
  private async settled(what: string): Promise<void> {
    const deadline = performance.now() + this.waitMs;
    for (;;) {
      const connected = this.relay.connections;
      if (this.listed().length >= connected) return;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`test runtime: ${what}: ${this.listed().length} of ${connected} connected plugins registered after ${this.waitMs} ms`);
      const listed = this.runtime.waitForPlugins(connected + this.builtins(), left).catch(() => undefined);
      await Promise.race([listed, this.relay.changed()]);
    }
  }

  /** Waits for the connected plugins, and checks that one of them takes `method`. */
  private async reach(method: string): Promise<void> {
    await this.settled(method);
    const listed = this.listed();
    if (listed.length === 0) throw new Error(`test runtime: ${method} reached no plugin: none is registered (start one with startPlugin, or connect one to socketPath)`);
    const bit = eventBit(eventOfMethod(method)!);
    if (!listed.some((p) => (p.events & bit) !== 0)) throw new Error(`test runtime: ${method} reached no plugin: none of ${listed.map((p) => p.id).join(", ")} subscribes to it`);
  }

  /** RunPodSandbox, relayed to every subscribed plugin in order. */
  async runPodSandbox(pod: TestPod): Promise<void> {
    await this.reach("RunPodSandbox");
    return this.runtime.runPodSandbox({ pod: toMessage(PodSandboxSchema, pod) });
  }

  /** UpdatePodSandbox with the pod's new resources and overhead. */
  async updatePodSandbox(pod: TestPod, resources: TestResources = {}, overhead: TestResources = {}): Promise<UpdatePodSandboxResponse> {
    await this.reach("UpdatePodSandbox");
    return this.runtime.updatePodSandbox({ pod: toMessage(PodSandboxSchema, pod), linuxResources: toMessage(LinuxResourcesSchema, resources), overheadLinuxResources: toMessage(LinuxResourcesSchema, overhead) });
  }

  /** PostUpdatePodSandbox, relayed to every subscribed plugin in order. */
  async postUpdatePodSandbox(pod: TestPod): Promise<void> {
    await this.reach("PostUpdatePodSandbox");
    return this.runtime.postUpdatePodSandbox({ pod: toMessage(PodSandboxSchema, pod) });
  }

  /** StopPodSandbox, relayed to every subscribed plugin in order. */
  async stopPodSandbox(pod: TestPod): Promise<void> {
    await this.reach("StopPodSandbox");
    return this.runtime.stopPodSandbox({ pod: toMessage(PodSandboxSchema, pod) });
  }

  /** RemovePodSandbox, relayed to every subscribed plugin in order. */
  async removePodSandbox(pod: TestPod): Promise<void> {
    await this.reach("RemovePodSandbox");
    return this.runtime.removePodSandbox({ pod: toMessage(PodSandboxSchema, pod) });
  }

  /** CreateContainer: the merged adjustment and updates of every plugin, as the Go runtime merges them. */
  async createContainer(pod: TestPod, container: TestContainer): Promise<CreateContainerResponse> {
    await this.reach("CreateContainer");
    return this.runtime.createContainer(this.podAndContainer(pod, container));
  }

  /** PostCreateContainer, relayed to every subscribed plugin in order. */
  async postCreateContainer(pod: TestPod, container: TestContainer): Promise<void> {
    await this.reach("PostCreateContainer");
    return this.runtime.postCreateContainer(this.podAndContainer(pod, container));
  }

  /** StartContainer, relayed to every subscribed plugin in order. */
  async startContainer(pod: TestPod, container: TestContainer): Promise<void> {
    await this.reach("StartContainer");
    return this.runtime.startContainer(this.podAndContainer(pod, container));
  }

  /** PostStartContainer, relayed to every subscribed plugin in order. */
  async postStartContainer(pod: TestPod, container: TestContainer): Promise<void> {
    await this.reach("PostStartContainer");
    return this.runtime.postStartContainer(this.podAndContainer(pod, container));
  }

  /** UpdateContainer: the merged updates, the target's own entry always last (an empty ContainerUpdate if no plugin updated it). */
  async updateContainer(pod: TestPod, container: TestContainer, resources: TestResources = {}): Promise<UpdateContainerResponse> {
    await this.reach("UpdateContainer");
    return this.runtime.updateContainer({ ...this.podAndContainer(pod, container), linuxResources: toMessage(LinuxResourcesSchema, resources) });
  }

  /** PostUpdateContainer, relayed to every subscribed plugin in order. */
  async postUpdateContainer(pod: TestPod, container: TestContainer): Promise<void> {
    await this.reach("PostUpdateContainer");
    return this.runtime.postUpdateContainer(this.podAndContainer(pod, container));
  }

  /** StopContainer: the merged updates of any container, the stopped one included. */
  async stopContainer(pod: TestPod, container: TestContainer): Promise<StopContainerResponse> {
    await this.reach("StopContainer");
    return this.runtime.stopContainer(this.podAndContainer(pod, container));
  }

  /** RemoveContainer, relayed to every subscribed plugin in order. */
  async removeContainer(pod: TestPod, container: TestContainer): Promise<void> {
    await this.reach("RemoveContainer");
    return this.runtime.removeContainer(this.podAndContainer(pod, container));
  }

  private podAndContainer(pod: TestPod, container: TestContainer): { pod: PodSandbox; container: Container } {
    return { pod: toMessage(PodSandboxSchema, pod), container: toMessage(ContainerSchema, container) };
  }

  /**
   * Stops the runtime (sending Shutdown with `reason`, if given), waits for the plugins
   * startPlugin started to close, and removes the socket.
   */
  async stop(reason?: string): Promise<void> {
    try {
      await this.runtime.stop(reason);
      await this.relay.close();
      await Promise.all(this.started.map((p) => p.closed));
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
      this.settleClosed();
    }
  }
}
