import { create } from "../api/messages.js";
import type { OwningPlugins, StopContainerResponse, UpdateContainerRequest, UpdateContainerResponse } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { ContainerUpdates } from "./container-updates.js";
import { make } from "./make.js";
import { OwnershipClaims } from "./ownership-claims.js";

/**
 * The merged result of one UpdateContainer event, as Go computes it. Plugins' updates of the
 * target merge on top of the request's resources, which are updated in place (so later plugins
 * see them); updates of other containers merge as in CreateContainer. Evictions are ignored.
 */
export class UpdateContainerResult {
  readonly #owners = new OwnershipClaims();
  readonly #updates: ContainerUpdates;
  readonly #target: string;

  constructor(request: UpdateContainerRequest) {
    // Go gives the request resources with memory and CPU before merging.
    const res = (request.linuxResources ??= create(v1beta1.LinuxResources));
    res.memory ??= create(v1beta1.LinuxMemory);
    res.cpu ??= create(v1beta1.LinuxCPU);
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
    const target = this.#updates.get(this.#target) ?? create(v1beta1.ContainerUpdate);
    return make(v1beta1.UpdateContainerResponse, { update: [...this.#updates.list, target] });
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
  readonly #owners = new OwnershipClaims();
  readonly #updates = new ContainerUpdates(this.#owners, undefined, undefined);

  /** Merges one plugin's response (`plugin` is its `idx-name`); throws Go's text on a conflict. */
  apply(plugin: string, response: StopContainerResponse | undefined): void {
    if (response !== undefined) this.#updates.apply(response.update, plugin);
  }

  /** The merged updates (live objects). */
  response(): StopContainerResponse {
    return make(v1beta1.StopContainerResponse, { update: this.#updates.list });
  }

  /** Every ownership record of the event (live object). */
  owners(): OwningPlugins {
    return this.#owners.message;
  }
}
