import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MessageInitShape, create } from "@bufbuild/protobuf";
import {
  ContainerSchema,
  type ContainerUpdate,
  type CreateContainerResponse,
  LinuxResourcesSchema,
  PodSandboxSchema,
  type StopContainerResponse,
  type UpdateContainerResponse,
} from "../../gen/v1beta1/api_pb.js";
import { NriRuntime } from "../runtime/nri-runtime.js";
import type { Deprecation } from "../runtime/deprecation.js";
import type { DefaultValidatorConfig } from "../runtime/default-validator.js";
import type { PluginInfo } from "../runtime/runtime-plugin.js";

type Pod = MessageInitShape<typeof PodSandboxSchema>;
type Ctr = MessageInitShape<typeof ContainerSchema>;

/** Options of a TestRuntime. */
export interface TestRuntimeOptions {
  /** Pods and containers new plugins are synchronized with. Default none. */
  pods?: Pod[];
  containers?: Ctr[];
  /** The Go runtime's defaults: 2000 ms per request, 5000 ms to register. */
  requestTimeoutMs?: number;
  registrationTimeoutMs?: number;
  /** The builtin default validator, as containerd configures it. */
  defaultValidator?: DefaultValidatorConfig;
  /** Where the runtime's log lines go (what the Go runtime logs). Default nowhere. */
  log?: (level: "info" | "warn" | "error", message: string) => void;
}

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
 * ```ts
 * const runtime = await TestRuntime.start();
 * const plugin = new NriPlugin(handlers, { socketPath: runtime.socketPath, name: "mine", idx: "10" });
 * await plugin.start();
 * const { adjust } = await runtime.createContainer({ id: "pod0" }, { id: "ctr0", podSandboxId: "pod0" });
 * await runtime.close();
 * ```
 */
export class TestRuntime {
  /** Every unsolicited update plugins sent, in order (all are reported as applied). */
  readonly updates: ReceivedUpdate[] = [];

  private constructor(
    /** The runtime underneath, for every event and option this class does not wrap. */
    readonly runtime: NriRuntime,
    /** The socket a plugin connects to. */
    readonly socketPath: string,
    private readonly dir: string,
  ) {}

  /** Starts a runtime on a fresh socket in a temporary directory. */
  static async start(options: TestRuntimeOptions = {}): Promise<TestRuntime> {
    const dir = mkdtempSync(join(tmpdir(), "nri-test-"));
    const socketPath = join(dir, "nri.sock");
    let self: TestRuntime | undefined;
    const log = options.log;
    const runtime = new NriRuntime({
      name: "nri-wire-test-runtime",
      version: "v0.1.0",
      socketPath,
      pluginPath: join(dir, "no-plugins"),
      pluginConfigPath: join(dir, "no-config"),
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.registrationTimeoutMs === undefined ? {} : { registrationTimeoutMs: options.registrationTimeoutMs }),
      ...(options.defaultValidator === undefined ? {} : { defaultValidator: options.defaultValidator }),
      synchronize: async (sync) =>
        void (await sync(
          (options.pods ?? []).map((p) => create(PodSandboxSchema, p)),
          (options.containers ?? []).map((c) => create(ContainerSchema, c)),
        )),
      updateContainers: (update, source) => {
        self?.updates.push({ plugin: source.plugin, update });
        return [];
      },
      ...(log === undefined ? {} : { log: { info: (m: string) => log("info", m), warn: (m: string) => log("warn", m), error: (m: string) => log("error", m) } }),
    });
    try {
      await runtime.start();
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    self = new TestRuntime(runtime, socketPath, dir);
    return self;
  }

  /** Registered plugins, in the order events reach them. */
  get plugins(): readonly PluginInfo[] {
    return this.runtime.plugins;
  }

  /** Deprecations recorded for old plugins (StateChange fallbacks). */
  get deprecations(): readonly Deprecation[] {
    return this.runtime.deprecations;
  }

  /** Resolves once `n` plugins are registered, configured and synchronized. */
  waitForPlugins(n = 1, timeoutMs = 10_000): Promise<void> {
    return this.runtime.waitForPlugins(n, timeoutMs);
  }

  /** CreateContainer: the merged adjustment and updates of every plugin, as the Go runtime merges them. */
  createContainer(pod: Pod, container: Ctr): Promise<CreateContainerResponse> {
    return this.runtime.createContainer({ pod, container });
  }

  /** UpdateContainer: the merged updates, the target's own entry last (absent if no plugin updated it). */
  updateContainer(pod: Pod, container: Ctr, resources: MessageInitShape<typeof LinuxResourcesSchema> = {}): Promise<UpdateContainerResponse> {
    return this.runtime.updateContainer({ pod, container, linuxResources: resources });
  }

  /** StopContainer: the merged updates of other containers. */
  stopContainer(pod: Pod, container: Ctr): Promise<StopContainerResponse> {
    return this.runtime.stopContainer({ pod, container });
  }

  runPodSandbox(pod: Pod): Promise<void> {
    return this.runtime.runPodSandbox({ pod });
  }

  stopPodSandbox(pod: Pod): Promise<void> {
    return this.runtime.stopPodSandbox({ pod });
  }

  removePodSandbox(pod: Pod): Promise<void> {
    return this.runtime.removePodSandbox({ pod });
  }

  postCreateContainer(pod: Pod, container: Ctr): Promise<void> {
    return this.runtime.postCreateContainer({ pod, container });
  }

  startContainer(pod: Pod, container: Ctr): Promise<void> {
    return this.runtime.startContainer({ pod, container });
  }

  postStartContainer(pod: Pod, container: Ctr): Promise<void> {
    return this.runtime.postStartContainer({ pod, container });
  }

  postUpdateContainer(pod: Pod, container: Ctr): Promise<void> {
    return this.runtime.postUpdateContainer({ pod, container });
  }

  removeContainer(pod: Pod, container: Ctr): Promise<void> {
    return this.runtime.removeContainer({ pod, container });
  }

  /** Stops the runtime (sending Shutdown with `reason`, if given) and removes its socket. */
  async close(reason?: string): Promise<void> {
    try {
      await this.runtime.stop(reason);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}


