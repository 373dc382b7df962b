import type { MessageInitShape } from "@bufbuild/protobuf";
import { type ContainerSchema, ContainerState, type PodSandboxSchema } from "../../gen/v1beta1/api_pb.js";

/*
 * The objects a scripted runtime shows plugins (the example runtime, the conformance runner): a
 * pod and a container present before the plugin connects, which Synchronize reports, and the pod
 * and container the script's events are about.
 */

/** The pod present before the plugin. */
export const syncPod: MessageInitShape<typeof PodSandboxSchema> = { id: "pod0", name: "sync-pod", uid: "uid-pod0", namespace: "default" };

/** The running container present before the plugin. */
export const syncContainer: MessageInitShape<typeof ContainerSchema> = { id: "ctr0", podSandboxId: "pod0", name: "sync-ctr", state: ContainerState.CONTAINER_RUNNING };

/** The pod of the script's events, named and labelled after `label`. */
export function scriptPod(label: string): MessageInitShape<typeof PodSandboxSchema> {
  return { id: "pod1", name: `${label}-pod`, uid: "uid-pod1", namespace: "default", labels: { app: label } };
}

/** The container of the script's events (just created), named after `label`. */
export function scriptContainer(label: string): MessageInitShape<typeof ContainerSchema> {
  return { id: "ctr1", podSandboxId: "pod1", name: `${label}-ctr`, state: ContainerState.CONTAINER_CREATED, args: ["sleep", "inf"], env: ["A=1"] };
}
