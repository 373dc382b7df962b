import type { Container, LinuxResources, PodSandbox } from "../../gen/v1beta1/api_lite.js";
import { type Loose, toGeneratedMessage } from "./loose.js";
import type { UnaryMethod } from "./services.js";

/*
 * What an endpoint runs through its own code before it serves real events (plugin/warm-up.ts,
 * runtime/warm-up.ts): a pod and a container with the kinds of fields a Kubernetes runtime fills
 * in (maps, repeated messages, nested Linux settings, wrappers, 64-bit integers), so that every
 * decoder and encoder an event reaches has run, and been optimized, before the first one.
 */

const POD_ID = "5f0c8a31d9e24b7c86a1f3e07b2d94c6a8e51f7d03b96c2e4a7d18f05b3c9e21";
const CONTAINER_ID = "c93e1b7a05d84f26a1e9b3c70d5f82a46e1b9c37d08a5f2e6b4c19d73a0e58f4";
const UID = "8b2f6d14-3c7a-4e95-b1d8-06a9e2c47f53";
const CGROUP = "kubepods-burstable-pod8b2f6d14_3c7a_4e95_b1d8_06a9e2c47f53.slice";

function resources(shares: number, memory: number): Loose<LinuxResources> {
  return {
    memory: { limit: memory, swap: memory, useHierarchy: true },
    cpu: { shares, quota: 50_000, period: 100_000, cpus: "0-3", mems: "0" },
    hugepageLimits: [{ pageSize: "2MB", limit: 0 }],
    unified: { "memory.high": String(memory) },
    pids: { limit: 4096 },
  };
}

/** The pod every sample request is about. */
export function samplePod(): Loose<PodSandbox> {
  return {
    id: POD_ID,
    name: "sample-app-6c4f9d8b7-q5w2n",
    uid: UID,
    namespace: "sample",
    labels: {
      app: "sample-app",
      "app.kubernetes.io/component": "server",
      "pod-template-hash": "6c4f9d8b7",
      "io.kubernetes.pod.name": "sample-app-6c4f9d8b7-q5w2n",
      "io.kubernetes.pod.namespace": "sample",
      "io.kubernetes.pod.uid": UID,
    },
    annotations: {
      "kubernetes.io/config.seen": "2026-01-01T00:00:00.000000000Z",
      "kubernetes.io/config.source": "api",
      "sample.example/owner": "platform",
    },
    runtimeHandler: "runc",
    linux: {
      podOverhead: resources(0, 0),
      podResources: resources(512, 536_870_912),
      cgroupParent: `/kubepods.slice/kubepods-burstable.slice/${CGROUP}`,
      cgroupsPath: `${CGROUP}:cri-containerd:${POD_ID}`,
      namespaces: [{ type: "network", path: "/var/run/netns/cni-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d" }, { type: "ipc" }, { type: "uts" }],
      resources: resources(512, 536_870_912),
    },
    pid: 4242,
    ips: ["10.0.7.42"],
  };
}

/** The container every sample container request is about. */
export function sampleContainer(): Loose<Container> {
  return {
    id: CONTAINER_ID,
    podSandboxId: POD_ID,
    name: "server",
    state: 1,
    labels: { "io.kubernetes.container.name": "server", "io.kubernetes.pod.name": "sample-app-6c4f9d8b7-q5w2n", "io.kubernetes.pod.uid": UID },
    annotations: { "io.kubernetes.container.hash": "5e7a1c3b", "io.kubernetes.container.restartCount": "0", "io.kubernetes.pod.terminationGracePeriod": "30" },
    args: ["/bin/server", "--port=8080", "--log-format=json"],
    env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME=sample-app-6c4f9d8b7-q5w2n", "KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443"],
    mounts: [
      { destination: "/etc/hosts", type: "bind", source: `/var/lib/kubelet/pods/${UID}/etc-hosts`, options: ["rbind", "rprivate", "rw"] },
      { destination: "/dev/termination-log", type: "bind", source: `/var/lib/kubelet/pods/${UID}/containers/server/1a2b3c4d`, options: ["rbind", "rprivate", "rw"] },
      { destination: "/var/run/secrets/kubernetes.io/serviceaccount", type: "bind", source: `/var/lib/kubelet/pods/${UID}/volumes/kubernetes.io~projected/kube-api-access`, options: ["rbind", "rprivate", "ro"] },
    ],
    hooks: { createRuntime: [{ path: "/usr/bin/true", args: ["true"], env: ["HOOK=1"], timeout: 5 }] },
    linux: {
      namespaces: [{ type: "pid" }, { type: "ipc", path: `/proc/4242/ns/ipc` }, { type: "network", path: "/var/run/netns/cni-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d" }, { type: "mount" }],
      devices: [{ path: "/dev/fuse", type: "c", major: 10, minor: 229, fileMode: 0o666, uid: 0, gid: 0 }],
      resources: resources(256, 268_435_456),
      oomScoreAdj: 984,
      cgroupsPath: `${CGROUP}:cri-containerd:${CONTAINER_ID}`,
      sysctl: { "net.ipv4.ip_unprivileged_port_start": "0" },
    },
    pid: 4317,
    rlimits: [{ type: "RLIMIT_NOFILE", hard: 1_048_576, soft: 1_048_576 }],
    createdAt: 1_767_225_600_000_000_000n,
    user: { uid: 65_532, gid: 65_532, additionalGids: [65_532] },
  };
}

/**
 * A request of `method` about the sample pod and container: every request field that is a pod, a
 * container or Linux resources is set, the rest left empty.
 */
export function sampleRequest<M extends UnaryMethod>(method: M): ReturnType<M["input"]["create"]> {
  const fields = new Set(method.input.fields().map((f) => f.localName));
  const init: Record<string, unknown> = {};
  if (fields.has("pod")) init.pod = samplePod();
  if (fields.has("container")) init.container = sampleContainer();
  if (fields.has("linuxResources")) init.linuxResources = resources(384, 402_653_184);
  return toGeneratedMessage(method.input, init) as ReturnType<M["input"]["create"]>;
}
