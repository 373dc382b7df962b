import { create } from "../../wire/create.js";
import {
  type ContainerEviction,
  ContainerEvictionSchema,
  type ContainerUpdate,
  ContainerUpdateSchema,
  type LinuxResources,
  LinuxContainerUpdateSchema,
  LinuxResourcesSchema,
} from "../../../gen/v1beta1/api_lite.js";
import "../../../gen/v1beta1/api_codec.js"; // create() of the schemas above, without their descriptors
import { ResourceSetters } from "./resources.js";

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
    this.update = create(ContainerUpdateSchema, { containerId });
  }

  protected override resources(): LinuxResources {
    const linux = (this.update.linux ??= create(LinuxContainerUpdateSchema));
    return (linux.resources ??= create(LinuxResourcesSchema));
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
  return create(ContainerEvictionSchema, { containerId, reason });
}
