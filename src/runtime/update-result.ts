import { create } from "./messages.js";
import {
  ContainerUpdateSchema,
  LinuxCPUSchema,
  LinuxMemorySchema,
  LinuxResourcesSchema,
  type OwningPlugins,
  type StopContainerResponse,
  StopContainerResponseSchema,
  type UpdateContainerRequest,
  type UpdateContainerResponse,
  UpdateContainerResponseSchema,
} from "../../gen/v1beta1/api_pb.js";
import { ContainerUpdates } from "./container-updates.js";
import { make } from "./make.js";
import { Owners } from "./owners.js";

/**
 * The merged result of one UpdateContainer event, as Go computes it. Plugins' updates of the
 * target merge on top of the request's resources, which are updated in place (so later plugins
 * see them); updates of other containers merge as in CreateContainer. Evictions are ignored.
 */
export class UpdateContainerResult {
  readonly #owners = new Owners();
  readonly #updates: ContainerUpdates;
  readonly #target: string;

  constructor(request: UpdateContainerRequest) {
    // Go gives the request resources with memory and CPU before merging.
    const res = (request.linuxResources ??= create(LinuxResourcesSchema));
    res.memory ??= create(LinuxMemorySchema);
    res.cpu ??= create(LinuxCPUSchema);
    this.#target = request.container?.id ?? "";
    this.#updates = new ContainerUpdates(this.#owners, undefined, request);
  }

  /** Merges one plugin's response (`plugin` is its `idx-name`); throws Go's text on a conflict. */
  apply(plugin: string, response: UpdateContainerResponse | undefined): void {
    if (response !== undefined) this.#updates.apply(response.update, plugin);
  }

  /**
   * Updates of other containers in first-mention order, then the target's, always last. When no
   * plugin updated the target, Go's list ends in a nil element, which goes on the wire as an
   * empty message: here an empty `ContainerUpdate` (see `targetUpdate`).
   */
  response(): UpdateContainerResponse {
    const target = this.#updates.get(this.#target) ?? create(ContainerUpdateSchema);
    return make(UpdateContainerResponseSchema, { update: [...this.#updates.list, target] });
  }

  /** The merged update of the target container, if any plugin updated it. */
  targetUpdate(): UpdateContainerResponse["update"][number] | undefined {
    return this.#updates.get(this.#target);
  }

  /** Every ownership record of the event (live object). */
  owners(): OwningPlugins {
    return this.#owners.message;
  }
}

/**
 * The merged result of one StopContainer event: plugins' updates of any container, the stopped
 * one included, in first-mention order.
 */
export class StopContainerResult {
  readonly #owners = new Owners();
  readonly #updates = new ContainerUpdates(this.#owners, undefined, undefined);

  /** Merges one plugin's response (`plugin` is its `idx-name`); throws Go's text on a conflict. */
  apply(plugin: string, response: StopContainerResponse | undefined): void {
    if (response !== undefined) this.#updates.apply(response.update, plugin);
  }

  /** The merged updates (live objects). */
  response(): StopContainerResponse {
    return make(StopContainerResponseSchema, { update: this.#updates.list });
  }

  /** Every ownership record of the event (live object). */
  owners(): OwningPlugins {
    return this.#owners.message;
  }
}
