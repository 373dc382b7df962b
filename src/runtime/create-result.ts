import { create } from "../api/messages.js";
import { type CDIDevice, type Container, type ContainerAdjustment, type CreateContainerRequest, type CreateContainerResponse, Field, type Hooks, type KeyValue, type LinuxContainer, type LinuxContainerAdjustment, type LinuxCPU, type LinuxDevice, type LinuxMemory, type LinuxNamespace, type LinuxNetDevice, type LinuxRdt, type LinuxResources, type Mount, type OwningPlugins, type POSIXRlimit } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { ContainerUpdates } from "./container-updates.js";
import { make } from "./make.js";
import { goMapKeys, sortedKeys } from "./go/map-order.js";
import { OwnershipClaims } from "./ownership-claims.js";
import { markForRemoval, markedForRemoval } from "../api/removal.js";
import { mergeCpu, mergeMemory, rewrap } from "./resources-merge.js";
import { setOwn } from "../wire/reader.js";

/** Resources with the memory and CPU parts the merge writes to. */
type FilledResources = LinuxResources & { memory: LinuxMemory; cpu: LinuxCPU };
/** A container (or reply) with every part the merge writes to. */
type FilledContainer = Container & { hooks: Hooks; linux: LinuxContainer & { resources: FilledResources } };
type FilledAdjustment = ContainerAdjustment & { hooks: Hooks; linux: LinuxContainerAdjustment & { resources: FilledResources } };

/**
 * Gives the request's container the parts Go fills in before merging (hooks, linux, its
 * resources, memory and CPU); Go clones the container for validators after this, so validators
 * see them too. Idempotent; creates the container itself if absent.
 */
export function fillCreateRequest(request: CreateContainerRequest): FilledContainer {
  const c = (request.container ??= create(v1beta1.Container));
  c.hooks ??= create(v1beta1.Hooks);
  const linux = (c.linux ??= create(v1beta1.LinuxContainer));
  const res = (linux.resources ??= create(v1beta1.LinuxResources));
  res.memory ??= create(v1beta1.LinuxMemory);
  res.cpu ??= create(v1beta1.LinuxCPU);
  return c as FilledContainer;
}

/**
 * The merged result of one CreateContainer event, as Go's `pkg/adaptation` computes it: feed each
 * plugin's response in invocation order to `apply`; the request's container is adjusted in place,
 * so each later plugin must be sent the request as it stands. The first conflict throws an
 * `AdaptationError` with Go's text and the event fails (the result is then unusable).
 */
export class CreateContainerResult {
  readonly #container: FilledContainer;
  readonly #id: string;
  readonly #owners = new OwnershipClaims();
  readonly #reply: FilledAdjustment;
  readonly #updates: ContainerUpdates;

  constructor(request: CreateContainerRequest) {
    this.#container = fillCreateRequest(request);
    this.#id = this.#container.id;
    // An unadjusted reply still carries these empty parts, as Go's does.
    const resources = make(v1beta1.LinuxResources, { memory: create(v1beta1.LinuxMemory), cpu: create(v1beta1.LinuxCPU) });
    this.#reply = make(v1beta1.ContainerAdjustment, { hooks: create(v1beta1.Hooks), linux: make(v1beta1.LinuxContainerAdjustment, { resources }) }) as FilledAdjustment;
    this.#updates = new ContainerUpdates(this.#owners, this.#id, undefined);
  }

  /**
   * Merges one plugin's response (`plugin` is its `idx-name`); `undefined` (no reply, or a
   * plugin not subscribed) changes nothing. Evictions are ignored, as in Go.
   */
  apply(plugin: string, response: CreateContainerResponse | undefined): void {
    if (response === undefined) return;
    if (response.adjust !== undefined) this.#adjust(response.adjust, plugin);
    this.#updates.apply(response.update, plugin);
  }

  /** The merged response: the adjustment and the updates of other containers (live objects). */
  response(): CreateContainerResponse {
    return make(v1beta1.CreateContainerResponse, { adjust: this.#reply, update: this.#updates.list });
  }

  /** Every ownership record of the event, as validators receive it (live object). */
  owners(): OwningPlugins {
    return this.#owners.message;
  }

  #adjust(a: ContainerAdjustment, plugin: string): void {
    this.#annotations(a.annotations, plugin);
    this.#mounts(a.mounts, plugin);
    this.#env(a.env, plugin);
    this.#args(a.args, plugin);
    this.#hooks(a.hooks, plugin);
    const l = a.linux;
    if (l !== undefined) {
      this.#devices(l.devices, plugin);
      this.#resources(l.resources, plugin);
      this.#simple(l.cgroupsPath !== "" ? l.cgroupsPath : undefined, Field.CgroupsPath, plugin, (v) => {
        this.#container.linux.cgroupsPath = v;
        this.#reply.linux.cgroupsPath = v;
      });
      this.#simple(l.oomScoreAdj, Field.OomScoreAdj, plugin, (v) => {
        this.#container.linux.oomScoreAdj = v;
        this.#reply.linux.oomScoreAdj = v;
      });
      this.#simple(l.ioPriority, Field.IoPriority, plugin, (v) => {
        this.#container.linux.ioPriority = v;
        this.#reply.linux.ioPriority = v;
      });
      this.#simple(l.seccompPolicy, Field.SeccompPolicy, plugin, (v) => {
        this.#container.linux.seccompPolicy = v;
        this.#reply.linux.seccompPolicy = v;
      });
      this.#namespaces(l.namespaces, plugin);
      this.#keyed(l.sysctl, Field.Sysctl, this.#container.linux.sysctl, this.#reply.linux.sysctl, () => "", plugin);
      this.#keyed(l.netDevices, Field.LinuxNetDevices, this.#container.linux.netDevices, this.#reply.linux.netDevices, (): LinuxNetDevice => create(v1beta1.LinuxNetDevice), plugin);
      this.#simple(l.scheduler, Field.LinuxSched, plugin, (v) => {
        this.#container.linux.scheduler = v;
        this.#reply.linux.scheduler = v;
      });
      this.#rdt(l.rdt, plugin);
      this.#simple(l.memoryPolicy, Field.MemoryPolicy, plugin, (v) => {
        this.#reply.linux.memoryPolicy = v;
      });
    }
    this.#rlimits(a.rlimits, plugin);
    this.#cdiDevices(a.CDIDevices, plugin);
  }

  /** A single-valued field: claim, then set (on the container, the reply or both). */
  #simple<T>(value: T | undefined, field: Field, plugin: string, set: (v: T) => void): void {
    if (value === undefined) return;
    this.#owners.claim(this.#id, field, plugin);
    set(value);
  }

  #annotations(annotations: Readonly<Record<string, string>>, plugin: string): void {
    this.#keyed(annotations, Field.Annotations, this.#container.annotations, this.#reply.annotations, () => "", plugin);
  }

  /**
   * Annotations, sysctls and net devices: `-k` keys ask for removal. A key both removed and set
   * (the replace idiom) is cleared, dropped from the container, marked in the reply, then claimed
   * and set. A key only removed just gets its marker in the reply: its owner and the container
   * stay as they are, and an earlier plugin's value stays in the reply beside the marker.
   */
  #keyed<V>(entries: Readonly<Record<string, V>>, field: Field, container: Record<string, V>, reply: Record<string, V>, marker: () => V, plugin: string): void {
    const keys = goMapKeys(entries);
    if (keys.length === 0) return;
    const removed = new Set<string>();
    const set: string[] = [];
    for (const k of keys) {
      const key = markedForRemoval(k);
      if (key !== undefined) removed.add(key);
      else set.push(k);
    }
    for (const k of set) {
      if (removed.has(k)) {
        this.#owners.clearKey(this.#id, field, k, plugin);
        delete container[k];
        setOwn(reply, markForRemoval(k), marker());
      }
      this.#owners.claimKey(this.#id, field, k, plugin);
      setOwn(container, k, entries[k]!);
      setOwn(reply, k, entries[k]!);
      removed.delete(k);
    }
    for (const k of sortedKeys(removed)) setOwn(reply, markForRemoval(k), marker());
  }

  /**
   * Mounts (keyed by destination): a removal drops the reply's entry (clearing its owner) and
   * the container's; a modification replaces the container's; additions are claimed and
   * appended; a removal without an addition of the same destination stays in the reply as a marker.
   */
  #mounts(mounts: readonly Mount[], plugin: string): void {
    if (mounts.length === 0) return;
    const { add, del, mod } = split(mounts, (m) => m.destination);
    this.#reply.mounts = this.#reply.mounts.filter((m) => !this.#cleared(del, m.destination, Field.Mounts, plugin));
    this.#container.mounts = this.#container.mounts.filter((m) => !del.has(m.destination) && !mod.has(m.destination));
    for (const m of add) {
      this.#owners.claimKey(this.#id, Field.Mounts, m.destination, plugin);
      this.#reply.mounts.push(m);
    }
    for (const key of sortedKeys(del.keys())) if (!mod.has(key)) this.#reply.mounts.push(del.get(key)!);
    this.#container.mounts.push(...add);
  }

  /** Env (keyed by name): like mounts, but removal markers never reach the reply. */
  #env(env: readonly KeyValue[], plugin: string): void {
    if (env.length === 0) return;
    const { add, del, mod } = split(env, (e) => e.key);
    this.#reply.env = this.#reply.env.filter((e) => !this.#cleared(del, e.key, Field.Env, plugin));
    this.#container.env = this.#container.env.filter((e) => {
      const eq = e.indexOf("=");
      const key = eq < 0 ? e : e.slice(0, eq);
      return !del.has(key) && !mod.has(key);
    });
    for (const e of add) {
      this.#owners.claimKey(this.#id, Field.Env, e.key, plugin);
      this.#reply.env.push(e);
    }
    for (const e of add) this.#container.env.push(`${e.key}=${e.value}`);
  }

  /** Devices (keyed by path): like env. */
  #devices(devices: readonly LinuxDevice[], plugin: string): void {
    if (devices.length === 0) return;
    const { add, del, mod } = split(devices, (d) => d.path);
    this.#reply.linux.devices = this.#reply.linux.devices.filter((d) => !this.#cleared(del, d.path, Field.Devices, plugin));
    this.#container.linux.devices = this.#container.linux.devices.filter((d) => !del.has(d.path) && !mod.has(d.path));
    for (const d of add) {
      this.#owners.claimKey(this.#id, Field.Devices, d.path, plugin);
      this.#reply.linux.devices.push(d);
    }
    this.#container.linux.devices.push(...add);
  }

  /** Whether `key` is removed; if so its owner becomes the remover's marker. */
  #cleared(del: ReadonlyMap<string, unknown>, key: string, field: Field, plugin: string): boolean {
    if (!del.has(key)) return false;
    this.#owners.clearKey(this.#id, field, key, plugin);
    return true;
  }

  /** Args replace the container's; a leading `""` first clears the owner (and is dropped). */
  #args(args: readonly string[], plugin: string): void {
    if (args.length === 0) return;
    let rest = args;
    if (rest[0] === "") {
      this.#owners.clear(this.#id, Field.Args, plugin);
      rest = rest.slice(1);
    }
    this.#owners.claim(this.#id, Field.Args, plugin);
    this.#reply.args = [...rest];
    this.#container.args = this.#reply.args;
  }

  /** Hooks are appended and never conflict; every contributor joins the owner list. */
  #hooks(hooks: Hooks | undefined, plugin: string): void {
    if (hooks === undefined) return;
    let claim = false;
    for (const kind of HOOK_KINDS) {
      const h = hooks[kind];
      if (h.length === 0) continue;
      this.#reply.hooks[kind].push(...h);
      this.#container.hooks[kind].push(...h);
      claim = true;
    }
    if (claim) this.#owners.accumulateHooks(this.#id, plugin);
  }

  #resources(res: LinuxResources | undefined, plugin: string): void {
    if (res === undefined) return;
    const id = this.#id;
    const container = this.#container.linux.resources;
    const reply = this.#reply.linux.resources;
    mergeMemory(this.#owners, res.memory, container.memory, reply.memory, id, plugin);
    mergeCpu(this.#owners, res.cpu, container.cpu, reply.cpu, id, plugin);
    for (const l of res.hugepageLimits) {
      this.#owners.claimKey(id, Field.HugepageLimits, l.pageSize, plugin);
      container.hugepageLimits.push(l);
      reply.hugepageLimits.push(l);
    }
    // Device cgroup rules are appended without ownership.
    container.devices.push(...res.devices);
    reply.devices.push(...res.devices);
    for (const k of goMapKeys(res.unified)) {
      this.#owners.claimKey(id, Field.CgroupsUnified, k, plugin);
      setOwn(container.unified, k, res.unified[k]!);
      setOwn(reply.unified, k, res.unified[k]!);
    }
    if (res.blockioClass !== undefined) {
      this.#owners.claim(id, Field.BlockioClass, plugin);
      container.blockioClass = rewrap(res.blockioClass);
      reply.blockioClass = rewrap(res.blockioClass);
    }
    if (res.rdtClass !== undefined) {
      this.#owners.claim(id, Field.RdtClass, plugin);
      container.rdtClass = rewrap(res.rdtClass);
      reply.rdtClass = rewrap(res.rdtClass);
    }
    if (res.pids !== undefined) {
      this.#owners.claim(id, Field.PidsLimit, plugin);
      const pids = make(v1beta1.LinuxPids, { limit: res.pids.limit });
      container.pids = pids;
      reply.pids = pids;
    }
  }

  /**
   * Namespaces (keyed by type): every entry, addition or `-type` removal, is claimed and
   * appended to the reply; the container's list keeps its order, replaced types in place and
   * new ones last (Go rebuilds it from a map, in random order).
   */
  #namespaces(namespaces: readonly LinuxNamespace[], plugin: string): void {
    if (namespaces.length === 0) return;
    const byType = new Map<string, LinuxNamespace>();
    for (const n of this.#container.linux.namespaces) byType.set(n.type, n);
    for (const n of namespaces) {
      const removed = markedForRemoval(n.type);
      const key = removed ?? n.type;
      this.#owners.claimKey(this.#id, Field.Namespace, key, plugin);
      if (removed !== undefined) byType.delete(key);
      else byType.set(key, n);
      this.#reply.linux.namespaces.push(n);
    }
    this.#container.linux.namespaces = [...byType.values()];
  }

  /**
   * RDT goes to the reply only. Upstream's nil check tests the wrong variable, so any reply with
   * a `linux` part creates an empty `rdt` in the merged reply, even without RDT settings.
   */
  #rdt(rdt: LinuxRdt | undefined, plugin: string): void {
    const reply = this.#reply.linux;
    reply.rdt ??= create(v1beta1.LinuxRdt);
    if (rdt === undefined) return;
    if (rdt.remove) {
      this.#owners.clearRdt(this.#id, plugin);
      reply.rdt = make(v1beta1.LinuxRdt, { remove: true });
    }
    const out = reply.rdt;
    if (rdt.closId !== undefined) {
      this.#owners.claim(this.#id, Field.RdtClosID, plugin);
      out.closId = rewrap(rdt.closId);
      out.remove = false;
    }
    if (rdt.schemata !== undefined) {
      this.#owners.claim(this.#id, Field.RdtSchemata, plugin);
      out.schemata = rewrap(rdt.schemata);
      out.remove = false;
    }
    if (rdt.enableMonitoring !== undefined) {
      this.#owners.claim(this.#id, Field.RdtEnableMonitoring, plugin);
      out.enableMonitoring = rewrap(rdt.enableMonitoring);
      out.remove = false;
    }
  }

  /** Rlimits (keyed by type): claimed and appended to container and reply; no removal. */
  #rlimits(rlimits: readonly POSIXRlimit[], plugin: string): void {
    for (const l of rlimits) {
      this.#owners.claimKey(this.#id, Field.Rlimits, l.type, plugin);
      this.#container.rlimits.push(l);
      this.#reply.rlimits.push(l);
    }
  }

  /** CDI devices (keyed by name): claimed and appended to the reply only; no removal. */
  #cdiDevices(devices: readonly CDIDevice[], plugin: string): void {
    for (const d of devices) {
      this.#owners.claimKey(this.#id, Field.CdiDevices, d.name, plugin);
      this.#reply.CDIDevices.push(d);
    }
  }
}

const HOOK_KINDS = ["prestart", "poststart", "poststop", "createRuntime", "createContainer", "startContainer"] as const;

/** Splits a keyed list into additions (in order), removals and modifications by key. */
function split<T>(items: readonly T[], keyOf: (t: T) => string): { add: T[]; del: Map<string, T>; mod: Map<string, T> } {
  const add: T[] = [];
  const del = new Map<string, T>();
  const mod = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    const removed = markedForRemoval(key);
    if (removed !== undefined) del.set(removed, item);
    else {
      add.push(item);
      mod.set(key, item);
    }
  }
  return { add, del, mod };
}
