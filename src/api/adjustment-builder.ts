import {
  type ContainerAdjustment,
  type Hook,
  type LinuxContainerAdjustment,
  type LinuxDevice,
  type LinuxIOPriority,
  type LinuxNamespace,
  type LinuxNetDevice,
  type LinuxRdt,
  type LinuxResources,
  type LinuxScheduler,
  type LinuxSeccomp,
  type Mount,
  type MpolFlag,
  type MpolMode,
  type Hooks,
} from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { type Int64Like, int64, uint64 } from "./integers.js";
import { type Loose, toMessage } from "./loose.js";
import { markForRemoval } from "./removal.js";
import { ResourceSetters } from "./resource-setters.js";
import { setOwn } from "../wire/reader.js";

const HOOK_KINDS = ["prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"] as const;

/**
 * Builds the ContainerAdjustment a CreateContainer handler returns. Method names and semantics
 * follow the Go stub's `api.ContainerAdjustment` helpers; `remove*` methods write the `-key`
 * removal markers the runtime understands. Numbers are accepted for 64-bit fields and checked
 * against the field's range. `build()` returns the message the builder writes to: calls after it
 * change that message too, as Go's helpers change the adjustment they are called on.
 *
 * ```ts
 * createContainer: (req) => ({ adjust: new AdjustmentBuilder().addEnv("A", "1").setLinuxMemoryLimit(1 << 30).build() })
 * ```
 */
export class AdjustmentBuilder extends ResourceSetters {
  private readonly adj: ContainerAdjustment = v1beta1.ContainerAdjustment.create();

  private linux(): LinuxContainerAdjustment {
    return (this.adj.linux ??= v1beta1.LinuxContainerAdjustment.create());
  }

  protected override resources(): LinuxResources {
    const l = this.linux();
    return (l.resources ??= v1beta1.LinuxResources.create());
  }

  private rdt(): LinuxRdt {
    const l = this.linux();
    return (l.rdt ??= v1beta1.LinuxRdt.create());
  }

  /** The adjustment built so far. */
  build(): ContainerAdjustment {
    return this.adj;
  }

  /** Adds (or sets) the annotation `key`. */
  addAnnotation(key: string, value: string): this {
    setOwn(this.adj.annotations, key, value);
    return this;
  }

  /** Removes the annotation `key`; the plugin may then set it even if another plugin did. */
  removeAnnotation(key: string): this {
    this.adj.annotations[markForRemoval(key)] = "";
    return this;
  }

  /** Adds a mount. */
  addMount(mount: Loose<Mount>): this {
    this.adj.mounts.push(toMessage(v1beta1.Mount, mount));
    return this;
  }

  /** Removes the mount at `destination` (the path inside the container). */
  removeMount(destination: string): this {
    this.adj.mounts.push(v1beta1.Mount.create({ destination: markForRemoval(destination) }));
    return this;
  }

  /** Adds (or sets) the environment variable `key`. */
  addEnv(key: string, value: string): this {
    this.adj.env.push(v1beta1.KeyValue.create({ key, value }));
    return this;
  }

  /** Removes the environment variable `key`. */
  removeEnv(key: string): this {
    this.adj.env.push(v1beta1.KeyValue.create({ key: markForRemoval(key) }));
    return this;
  }

  /** Replaces the container's command line; conflicts with another plugin doing the same. */
  setArgs(args: readonly string[]): this {
    this.adj.args = [...args];
    return this;
  }

  /** Replaces the container's command line, overriding another plugin's without a conflict. */
  updateArgs(args: readonly string[]): this {
    this.adj.args = ["", ...args];
    return this;
  }

  /** Adds OCI hooks, appended to those of each kind already added. */
  addHooks(hooks: Loose<Hooks>): this {
    const h = (this.adj.hooks ??= v1beta1.Hooks.create());
    const given = toMessage(v1beta1.Hooks, hooks);
    for (const kind of HOOK_KINDS) h[kind].push(...given[kind]);
    return this;
  }

  /** Adds one OCI hook of the given kind. */
  addHook(kind: (typeof HOOK_KINDS)[number], hook: Loose<Hook>): this {
    const h = (this.adj.hooks ??= v1beta1.Hooks.create());
    h[kind].push(toMessage(v1beta1.Hook, hook));
    return this;
  }

  /** Adds a POSIX rlimit (`RLIMIT_NOFILE`, ...). */
  addRlimit(type: string, hard: Int64Like, soft: Int64Like): this {
    const i = this.adj.rlimits.length;
    this.adj.rlimits.push(v1beta1.POSIXRlimit.create({ type, hard: uint64(hard, `rlimits[${i}].hard`), soft: uint64(soft, `rlimits[${i}].soft`) }));
    return this;
  }

  /** Adds a device node; `major`, `minor` as numbers, `fileMode`, `uid`, `gid` bare or wrapped. */
  addDevice(device: Loose<LinuxDevice>): this {
    this.linux().devices.push(toMessage(v1beta1.LinuxDevice, device));
    return this;
  }

  /** Removes the device at `path`. */
  removeDevice(path: string): this {
    this.linux().devices.push(v1beta1.LinuxDevice.create({ path: markForRemoval(path) }));
    return this;
  }

  /** Adds a CDI device by its fully qualified name (`vendor.com/class=name`). */
  addCDIDevice(name: string): this {
    this.adj.CDIDevices.push(v1beta1.CDIDevice.create({ name }));
    return this;
  }

  /** Adds a namespace, or replaces the one of the same type. */
  addOrReplaceNamespace(ns: Loose<LinuxNamespace>): this {
    this.linux().namespaces.push(toMessage(v1beta1.LinuxNamespace, ns));
    return this;
  }

  /** Removes the namespace of `type` (`network`, `ipc`, ...). */
  removeNamespace(type: string): this {
    this.linux().namespaces.push(v1beta1.LinuxNamespace.create({ type: markForRemoval(type) }));
    return this;
  }

  /** Moves the host network device `hostDev` into the container, named as `device` says. */
  addLinuxNetDevice(hostDev: string, device: Loose<LinuxNetDevice>): this {
    setOwn(this.linux().netDevices, hostDev, toMessage(v1beta1.LinuxNetDevice, device));
    return this;
  }

  /** Removes the network device another plugin added from host device `hostDev`. */
  removeLinuxNetDevice(hostDev: string): this {
    this.linux().netDevices[markForRemoval(hostDev)] = v1beta1.LinuxNetDevice.create();
    return this;
  }

  /** Sets the memory policy: mode, node list, flags. */
  setLinuxMemoryPolicy(mode: MpolMode, nodes: string, ...flags: MpolFlag[]): this {
    this.linux().memoryPolicy = v1beta1.LinuxMemoryPolicy.create({ mode, nodes, flags });
    return this;
  }

  /** Sets the RDT CLOS id. */
  setLinuxRDTClosID(id: string): this {
    this.rdt().closId = v1beta1.OptionalString.create({ value: id });
    return this;
  }

  /** Sets the RDT schemata lines. */
  setLinuxRDTSchemata(schemata: readonly string[]): this {
    this.rdt().schemata = v1beta1.OptionalRepeatedString.create({ value: [...schemata] });
    return this;
  }

  /** Enables or disables RDT monitoring. */
  setLinuxRDTEnableMonitoring(on: boolean): this {
    this.rdt().enableMonitoring = v1beta1.OptionalBool.create({ value: on });
    return this;
  }

  /** Removes the container's RDT configuration. */
  removeLinuxRDT(): this {
    this.rdt().remove = true;
    return this;
  }

  /** Sets the cgroups path. */
  setLinuxCgroupsPath(path: string): this {
    this.linux().cgroupsPath = path;
    return this;
  }

  /** Sets the OOM score adjustment (-1000 to 1000 on Linux); undefined clears it. */
  setLinuxOomScoreAdj(score: Int64Like | undefined): this {
    const l = this.linux();
    if (score === undefined) delete l.oomScoreAdj;
    else l.oomScoreAdj = v1beta1.OptionalInt.create({ value: int64(score, "linux.oom_score_adj") });
    return this;
  }

  /** Sets the I/O priority (class and level). */
  setLinuxIOPriority(prio: Loose<LinuxIOPriority>): this {
    this.linux().ioPriority = toMessage(v1beta1.LinuxIOPriority, prio);
    return this;
  }

  /** Replaces the seccomp policy. */
  setLinuxSeccompPolicy(policy: Loose<LinuxSeccomp>): this {
    this.linux().seccompPolicy = toMessage(v1beta1.LinuxSeccomp, policy);
    return this;
  }

  /** Sets the sysctl `key`. (A runtime on NRI v0.11.0 crashes on any sysctl adjustment.) */
  setLinuxSysctl(key: string, value: string): this {
    setOwn(this.linux().sysctl, key, value);
    return this;
  }

  /** Removes the sysctl `key`. Runtimes before NRI v0.12.5 file the removal under the annotations. */
  removeLinuxSysctl(key: string): this {
    this.linux().sysctl[markForRemoval(key)] = "";
    return this;
  }

  /** Sets the scheduling policy and attributes. */
  setLinuxScheduler(scheduler: Loose<LinuxScheduler>): this {
    this.linux().scheduler = toMessage(v1beta1.LinuxScheduler, scheduler);
    return this;
  }
}
