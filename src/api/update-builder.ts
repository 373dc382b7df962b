import {
  type ContainerEviction,
  type ContainerUpdate,
  type LinuxResources,
} from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { ResourceSetters } from "./resource-setters.js";

/**
 * Builds a ContainerUpdate: the resources of one running container to change, returned from
 * UpdateContainer, StopContainer, CreateContainer or Synchronize handlers, or sent unprompted
 * with `plugin.updateContainers`. Names follow the Go stub's `api.ContainerUpdate` helpers.
 *
 * ```ts
 * new UpdateBuilder(ctr.id).setLinuxMemoryLimit(512 * 2 ** 20).setIgnoreFailure().build()
 * ```
 */
export class UpdateBuilder extends ResourceSetters {
  private readonly update: ContainerUpdate;

  constructor(containerId: string) {
    super();
    this.update = v1beta1.ContainerUpdate.create({ containerId });
  }

  protected override resources(): LinuxResources {
    const linux = (this.update.linux ??= v1beta1.LinuxContainerUpdate.create());
    return (linux.resources ??= v1beta1.LinuxResources.create());
  }

  /** The update built so far. */
  build(): ContainerUpdate {
    return this.update;
  }

  /** Sets the id of the container to update. */
  setContainerId(id: string): this {
    this.update.containerId = id;
    return this;
  }

  /** A failure to apply this update does not fail the operation that asked for it. */
  setIgnoreFailure(): this {
    this.update.ignoreFailure = true;
    return this;
  }
}

/** An eviction: asks the runtime to evict `containerId`, giving `reason`. */
export function eviction(containerId: string, reason: string): ContainerEviction {
  return v1beta1.ContainerEviction.create({ containerId, reason });
}
