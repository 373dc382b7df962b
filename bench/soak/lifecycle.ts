/**
 * The pods and containers of the soak: realistic messages (those of the benchmarks) under fresh
 * ids, and the state a runtime would synchronize a new plugin with.
 */
import { create } from "@bufbuild/protobuf";
import { type Container, ContainerSchema, ContainerState, type PodSandbox, PodSandboxSchema } from "../../gen/v1beta1/api_pb.js";
import { realisticContainer, realisticPod } from "../translate.js";

/** A pod `pod-N`. */
export function podOf(n: number): PodSandbox {
  const pod = realisticPod();
  return create(PodSandboxSchema, { ...pod, id: `pod-${n}`, name: `soak-${n}`, uid: `uid-${n}` });
}

/** Container `i` of a pod, named `name`. */
export function containerOf(pod: PodSandbox, i: number, name: string): Container {
  const ctr = realisticContainer();
  return create(ContainerSchema, { ...ctr, id: `${pod.id}-ctr-${i}`, podSandboxId: pod.id, name, state: ContainerState.CONTAINER_CREATED });
}

/** The pods and containers that exist now, in creation order. */
export class RuntimeState {
  readonly pods = new Map<string, PodSandbox>();
  readonly containers = new Map<string, Container>();

  /** Copies of the state, as Synchronize sends it. */
  snapshot(): { pods: PodSandbox[]; containers: Container[] } {
    return { pods: [...this.pods.values()], containers: [...this.containers.values()] };
  }
}
