import { create } from "../api/messages.js";
import { type ContainerUpdate, Field, type UpdateContainerRequest } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { AdaptationError } from "./errors.js";
import { goQuote } from "../internal/go-quote.js";
import { make } from "./make.js";
import { goMapKeys } from "./go/map-order.js";
import type { OwnershipClaims } from "./ownership-claims.js";
import { setOwn } from "../wire/reader.js";
import { copyResources, mergeCpu, mergeMemory, rewrap } from "./resources-merge.js";

/**
 * The merged updates plugins ask for during one event: one `ContainerUpdate` per target
 * container, listed in first-mention order, claiming fields under the target's id in the event's
 * shared `OwnershipClaims`. `creating` is the id of a container being created (it cannot be updated);
 * `request` is an UpdateContainer event's request, whose target merges on the request's
 * resources and is kept out of `list` (the event's response appends it last).
 */
export class ContainerUpdates {
  /** Merged updates of containers other than an UpdateContainer target, first mention first. */
  readonly list: ContainerUpdate[] = [];
  readonly #byId = new Map<string, ContainerUpdate>();

  constructor(
    private readonly owners: OwnershipClaims,
    private readonly creating: string | undefined,
    private readonly request: UpdateContainerRequest | undefined,
  ) {}

  /** The merged update of `id`, if a plugin mentioned it. */
  get(id: string): ContainerUpdate | undefined {
    return this.#byId.get(id);
  }

  /**
   * Merges one plugin's updates in order. A conflict discards that plugin's update of that
   * container and throws, unless the update has `ignoreFailure`.
   */
  apply(updates: readonly ContainerUpdate[], plugin: string): void {
    for (const u of updates) {
      const merged = this.entry(u, plugin);
      try {
        this.mergeResources(merged, u, plugin);
      } catch (err) {
        if (!u.ignoreFailure) throw err;
      }
    }
  }

  private entry(u: ContainerUpdate, plugin: string): ContainerUpdate {
    const id = u.containerId;
    if (this.creating === id) throw new AdaptationError(`plugin ${goQuote(plugin)} asked update of ${goQuote(id)} during creation`);
    const known = this.#byId.get(id);
    if (known !== undefined) {
      known.ignoreFailure &&= u.ignoreFailure;
      return known;
    }
    const resources = make(v1beta1.LinuxResources, { memory: create(v1beta1.LinuxMemory), cpu: create(v1beta1.LinuxCPU) });
    const merged = make(v1beta1.ContainerUpdate, { containerId: id, linux: make(v1beta1.LinuxContainerUpdate, { resources }), ignoreFailure: u.ignoreFailure });
    this.#byId.set(id, merged);
    if (!this.isTarget(id)) this.list.push(merged);
    return merged;
  }

  private isTarget(id: string): boolean {
    return this.request !== undefined && (this.request.container?.id ?? "") === id;
  }

  /**
   * Works on a copy of the base (the UpdateContainer request's resources for its target, the
   * merged update otherwise) so a conflict leaves nothing behind. Upstream checks the pids limit
   * on the copy instead of on the update: an update's pids limit is never applied, and a base
   * that has one is claimed by every plugin updating that container.
   */
  private mergeResources(merged: ContainerUpdate, u: ContainerUpdate, plugin: string): void {
    const res = u.linux?.resources;
    if (res === undefined) return;
    const id = u.containerId;
    const target = this.isTarget(id);
    // Both bases always carry resources with memory and CPU: the merged entry is created so and
    // UpdateContainerResult fills the request's at construction, as Go does.
    const base = copyResources(target ? this.request!.linuxResources! : merged.linux!.resources!);

    mergeMemory(this.owners, res.memory, base.memory!, undefined, id, plugin);
    mergeCpu(this.owners, res.cpu, base.cpu!, undefined, id, plugin);
    for (const l of res.hugepageLimits) {
      this.owners.claimKey(id, Field.HugepageLimits, l.pageSize, plugin);
      base.hugepageLimits.push(l);
    }
    for (const k of goMapKeys(res.unified)) {
      this.owners.claimKey(id, Field.CgroupsUnified, k, plugin);
      setOwn(base.unified, k, res.unified[k]!);
    }
    if (res.blockioClass !== undefined) {
      this.owners.claim(id, Field.BlockioClass, plugin);
      base.blockioClass = rewrap(res.blockioClass);
    }
    if (res.rdtClass !== undefined) {
      this.owners.claim(id, Field.RdtClass, plugin);
      base.rdtClass = rewrap(res.rdtClass);
    }
    if (base.pids !== undefined) {
      this.owners.claim(id, Field.PidsLimit, plugin);
      base.pids = make(v1beta1.LinuxPids, { limit: base.pids.limit });
    }

    merged.linux!.resources = copyResources(base);
    if (target) this.request!.linuxResources = copyResources(base);
  }
}
