/**
 * Version translation of the StateChange events: rewriting top-level tags (src/translate) against
 * the generated-types route (decode, create, encode) on a container event whose pod and container
 * look like real Kubernetes ones. `npx tsx bench/translate.ts [ms]` prints ops/s and the ratios.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as alpha from "../gen/v1alpha1/api_pb.js";
import * as beta from "../gen/v1beta1/api_pb.js";
import { fromStateChange, toStateChange } from "../src/translate/index.js";

export interface RouteResult {
  /** Tag rewriting, ops/s. */
  rewrite: number;
  /** Generated types: fromBinary, create, toBinary, ops/s. */
  generated: number;
  /** rewrite / generated. */
  ratio: number;
}

export interface TranslateBenchResult {
  /** Sizes in bytes of the PostCreateContainer request and of its StateChangeEvent. */
  dedicatedBytes: number;
  stateChangeBytes: number;
  stateChangeToDedicated: RouteResult;
  dedicatedToStateChange: RouteResult;
}

const podId = "6c1a3f0e9b2d4c8a7e5f1b3d9a0c2e4f6b8d0a1c3e5f7b9d1a3c5e7f9b1d3a5c";
const ctrId = "f3e1d9c7b5a3918f7e6d5c4b3a29180f7e6d5c4b3a2918f7e6d5c4b3a291807f";

function resources(cpuShares: bigint, memLimit: bigint): beta.LinuxResources {
  return create(beta.LinuxResourcesSchema, {
    memory: { limit: { value: memLimit }, swap: { value: memLimit }, swappiness: { value: 60n } },
    cpu: { shares: { value: cpuShares }, quota: { value: 50000n }, period: { value: 100000n }, cpus: "0-3", mems: "0" },
    hugepageLimits: [
      { pageSize: "2MB", limit: 0n },
      { pageSize: "1GB", limit: 0n },
    ],
    unified: { "memory.high": "402653184", "memory.oom.group": "1" },
    pids: { limit: 4096n },
  });
}

/** A PodSandbox as containerd reports a Deployment's pod. */
export function realisticPod(): beta.PodSandbox {
  return create(beta.PodSandboxSchema, {
    id: podId,
    name: "web-frontend-7d9c6b5f4-x2k8p",
    uid: "0e5b7c1a-93f4-4d2e-8a61-5c7d9e0f1a2b",
    namespace: "production",
    labels: {
      app: "web-frontend",
      "app.kubernetes.io/name": "web-frontend",
      "app.kubernetes.io/instance": "web-frontend-prod",
      "app.kubernetes.io/version": "2.14.3",
      "pod-template-hash": "7d9c6b5f4",
      "io.kubernetes.pod.name": "web-frontend-7d9c6b5f4-x2k8p",
      "io.kubernetes.pod.namespace": "production",
      "io.kubernetes.pod.uid": "0e5b7c1a-93f4-4d2e-8a61-5c7d9e0f1a2b",
    },
    annotations: {
      "kubernetes.io/config.seen": "2025-11-20T09:14:03.512983114Z",
      "kubernetes.io/config.source": "api",
      "prometheus.io/scrape": "true",
      "prometheus.io/port": "9102",
      "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
    },
    runtimeHandler: "runc",
    linux: {
      podOverhead: resources(0n, 0n),
      podResources: resources(1024n, 1073741824n),
      cgroupParent: "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0e5b7c1a_93f4_4d2e_8a61_5c7d9e0f1a2b.slice",
      cgroupsPath: `kubepods-burstable-pod0e5b7c1a_93f4_4d2e_8a61_5c7d9e0f1a2b.slice:cri-containerd:${podId}`,
      namespaces: [
        { type: "network", path: "/var/run/netns/cni-3b1f9c2e-7a4d-1e6b-9c0f-2d8e5a7b3c1f" },
        { type: "ipc" },
        { type: "uts" },
      ],
      resources: resources(1024n, 1073741824n),
    },
    pid: 41237,
    ips: ["10.244.3.17", "fd00:10:244:3::11"],
  });
}

/** The Container of that pod: env, mounts, hooks, Linux resources, devices. */
export function realisticContainer(): beta.Container {
  return create(beta.ContainerSchema, {
    id: ctrId,
    podSandboxId: podId,
    name: "nginx",
    state: beta.ContainerState.CONTAINER_CREATED,
    labels: {
      "io.kubernetes.container.name": "nginx",
      "io.kubernetes.pod.name": "web-frontend-7d9c6b5f4-x2k8p",
      "io.kubernetes.pod.namespace": "production",
      "io.kubernetes.pod.uid": "0e5b7c1a-93f4-4d2e-8a61-5c7d9e0f1a2b",
    },
    annotations: {
      "io.kubernetes.container.hash": "8d3c1f2a",
      "io.kubernetes.container.restartCount": "0",
      "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
      "io.kubernetes.container.terminationMessagePolicy": "File",
      "io.kubernetes.pod.terminationGracePeriod": "30",
    },
    args: ["nginx", "-g", "daemon off;"],
    env: [
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "HOSTNAME=web-frontend-7d9c6b5f4-x2k8p",
      "NGINX_VERSION=1.27.2",
      "NJS_VERSION=0.8.7",
      "PKG_RELEASE=1~bookworm",
      "KUBERNETES_SERVICE_HOST=10.96.0.1",
      "KUBERNETES_SERVICE_PORT=443",
      "KUBERNETES_SERVICE_PORT_HTTPS=443",
      "KUBERNETES_PORT=tcp://10.96.0.1:443",
      "KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
      "KUBERNETES_PORT_443_TCP_PROTO=tcp",
      "KUBERNETES_PORT_443_TCP_PORT=443",
      "KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1",
      "WEB_FRONTEND_SERVICE_HOST=10.96.114.27",
      "WEB_FRONTEND_SERVICE_PORT=80",
    ],
    mounts: [
      { destination: "/etc/hosts", type: "bind", source: `/var/lib/kubelet/pods/0e5b7c1a-93f4-4d2e-8a61-5c7d9e0f1a2b/etc-hosts`, options: ["rbind", "rprivate", "rw"] },
      { destination: "/dev/termination-log", type: "bind", source: "/var/lib/kubelet/pods/0e5b7c1a-93f4-4d2e-8a61-5c7d9e0f1a2b/containers/nginx/5a1c9e3d", options: ["rbind", "rprivate", "rw"] },
      { destination: "/etc/hostname", type: "bind", source: `/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/${podId}/hostname`, options: ["rbind", "rprivate", "rw"] },
      { destination: "/etc/resolv.conf", type: "bind", source: `/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/${podId}/resolv.conf`, options: ["rbind", "rprivate", "rw"] },
      { destination: "/dev/shm", type: "bind", source: `/run/containerd/io.containerd.grpc.v1.cri/sandboxes/${podId}/shm`, options: ["rbind", "rprivate", "rw"] },
      { destination: "/var/run/secrets/kubernetes.io/serviceaccount", type: "bind", source: "/var/lib/kubelet/pods/0e5b7c1a-93f4-4d2e-8a61-5c7d9e0f1a2b/volumes/kubernetes.io~projected/kube-api-access-7xk2q", options: ["rbind", "rprivate", "ro"] },
      { destination: "/usr/share/nginx/html", type: "bind", source: "/var/lib/kubelet/pods/0e5b7c1a-93f4-4d2e-8a61-5c7d9e0f1a2b/volumes/kubernetes.io~configmap/site", options: ["rbind", "rprivate", "ro"] },
    ],
    hooks: { createRuntime: [{ path: "/usr/bin/nvidia-ctk", args: ["nvidia-ctk", "hook", "update-ldcache"], env: ["LANG=C"] }] },
    linux: {
      namespaces: [
        { type: "pid" },
        { type: "ipc", path: "/proc/41237/ns/ipc" },
        { type: "uts", path: "/proc/41237/ns/uts" },
        { type: "mount" },
        { type: "network", path: "/proc/41237/ns/net" },
      ],
      devices: [{ path: "/dev/fuse", type: "c", major: 10n, minor: 229n, fileMode: { value: 0o666 } }],
      resources: resources(512n, 536870912n),
      oomScoreAdj: { value: 969n },
      cgroupsPath: `kubepods-burstable-pod0e5b7c1a_93f4_4d2e_8a61_5c7d9e0f1a2b.slice:cri-containerd:${ctrId}`,
      sysctl: { "net.core.somaxconn": "1024" },
    },
    pid: 41301,
    rlimits: [{ type: "RLIMIT_NOFILE", hard: 1048576n, soft: 1048576n }],
    createdAt: 1763630043512983114n,
    user: { uid: 101, gid: 101, additionalGids: [101] },
    image: { name: "docker.io/library/nginx:1.27.2", digest: "sha256:2d194184b067db3598771b4cf326cfe6ad5051937ba1132b8b7d4b0184e0d0a6" },
  });
}

/** Runs `op` for about `ms` milliseconds after a warm-up; returns calls per second. */
function opsPerSec(ms: number, op: () => number): number {
  let sink = 0;
  const warm = performance.now();
  while (performance.now() - warm < Math.min(200, ms / 4)) for (let i = 0; i < 100; i++) sink += op();
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let i = 0; i < 200; i++) sink += op();
    n += 200;
    t = performance.now();
  }
  if (sink === -1) console.log(sink); // keeps the results alive
  return (n * 1000) / (t - t0);
}

/**
 * Ops/s of StateChange -> PostCreateContainer and back, by tag rewriting and by the generated
 * types, `ms` milliseconds per measurement. The generated route decodes and encodes within one
 * revision (no cross-revision copy), its cheapest form.
 */
export function translateBench(ms: number): TranslateBenchResult {
  const pod = realisticPod();
  const container = realisticContainer();
  const event = beta.Event.POST_CREATE_CONTAINER;
  const dedicated = toBinary(beta.PostCreateContainerRequestSchema, create(beta.PostCreateContainerRequestSchema, { pod, container }));
  const stateChange = toStateChange(event, dedicated);

  const scRewrite = opsPerSec(ms, () => fromStateChange(stateChange).payload.length);
  const scGenerated = opsPerSec(ms, () => {
    const sc = fromBinary(alpha.StateChangeEventSchema, stateChange);
    const req = create(alpha.PostCreateContainerRequestSchema, { pod: sc.pod, container: sc.container });
    return toBinary(alpha.PostCreateContainerRequestSchema, req).length;
  });
  const dRewrite = opsPerSec(ms, () => toStateChange(event, dedicated).length);
  const dGenerated = opsPerSec(ms, () => {
    const req = fromBinary(alpha.PostCreateContainerRequestSchema, dedicated);
    const sc = create(alpha.StateChangeEventSchema, { event, pod: req.pod, container: req.container });
    return toBinary(alpha.StateChangeEventSchema, sc).length;
  });
  return {
    dedicatedBytes: dedicated.length,
    stateChangeBytes: stateChange.length,
    stateChangeToDedicated: { rewrite: scRewrite, generated: scGenerated, ratio: scRewrite / scGenerated },
    dedicatedToStateChange: { rewrite: dRewrite, generated: dGenerated, ratio: dRewrite / dGenerated },
  };
}

function main(): void {
  const ms = Number(process.argv[2] ?? "2000");
  const r = translateBench(ms);
  const fmt = (n: number, digits = 0): string =>
    n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  console.log(`PostCreateContainer request ${r.dedicatedBytes} B, as StateChangeEvent ${r.stateChangeBytes} B; ${ms} ms per cell`);
  console.log("");
  console.log("| direction | tag rewriting ops/s | generated types ops/s | ratio |");
  console.log("|---|---|---|---|");
  for (const [name, x] of [
    ["StateChange → dedicated", r.stateChangeToDedicated],
    ["dedicated → StateChange", r.dedicatedToStateChange],
  ] as const) {
    console.log(`| ${name} | ${fmt(x.rewrite)} | ${fmt(x.generated)} | ×${fmt(x.ratio, 1)} |`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
