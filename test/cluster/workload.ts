import { readFileSync } from "node:fs";
import type { Cluster } from "./cluster.js";
import { conditionTrue, NODE } from "./cluster.js";
import type { KubeObject } from "./kube-api.js";

/** The pod annotation that opts a pod into the suite's plugins' adjustments. */
export const ADJUST_ANNOTATION = "nri-wire.dev/adjust";

/** Whether a pod is Running with every container ready. */
export function podReady(o: KubeObject): boolean {
  return (o.status?.phase as string | undefined) === "Running" && conditionTrue(o, "Ready");
}

/** The restart count of a pod's first container. */
export function restarts(o: KubeObject): number {
  const s = (o.status?.containerStatuses ?? []) as { restartCount: number }[];
  return s[0]?.restartCount ?? 0;
}

/**
 * A test pod: host network (there is no network plugin), the probe image's `/probe pause` as its
 * one container, annotated to be adjusted by the suite's plugins.
 */
export function testPod(name: string, image: string): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", annotations: { [ADJUST_ANNOTATION]: "true" } },
    spec: {
      hostNetwork: true,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: "probe", image, imagePullPolicy: "IfNotPresent" }],
    },
  };
}

/** Creates a test pod and resolves, once it is Running and ready, with the milliseconds that took. */
export async function runTestPod(c: Cluster, name: string, image: string): Promise<number> {
  const start = performance.now();
  await c.api.call("POST", "/api/v1/namespaces/default/pods", testPod(name, image));
  await c.api.waitFor("/api/v1/namespaces/default/pods", `fieldSelector=metadata.name=${name}`, podReady, `test pod ${name} did not become ready`, 120_000);
  return performance.now() - start;
}

/** Deletes a test pod and resolves once it is gone. */
export async function deleteTestPod(c: Cluster, name: string): Promise<void> {
  await c.api.call("DELETE", `/api/v1/namespaces/default/pods/${name}?gracePeriodSeconds=0`);
  const deadline = Date.now() + 120_000;
  // A watch reports no deletion of an object already gone: ask until the API says 404.
  for (;;) {
    const gone = await c.api.get(`/api/v1/namespaces/default/pods/${name}`).then(
      () => false,
      (e: { status?: number }) => e.status === 404,
    );
    if (gone) return;
    if (Date.now() > deadline) throw new Error(`cluster: test pod ${name} was not deleted (waited 120000 ms)`);
    await c.api.waitFor("/api/v1/namespaces/default/pods", `fieldSelector=metadata.name=${name}`, () => false, "", 2_000).catch(() => undefined);
  }
}

/** What a pod's container sees from inside: its environment and its pids limit. */
export interface Inside {
  readonly env: Record<string, string>;
  readonly pidsMax: string;
}

/** Reads, through `kubectl exec` (API server → kubelet → runtime), what a test pod's container sees. */
export async function inside(c: Cluster, pod: string): Promise<Inside> {
  const envText = await c.kubectl("exec", "-n", "default", pod, "--", "/probe", "env");
  const env: Record<string, string> = {};
  for (const line of envText.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  // cgroup v2 names it pids.max at the container's cgroup root, v1 under the pids controller.
  const pids = await c.kubectl("exec", "-n", "default", pod, "--", "/probe", "cat", "/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max");
  return { env, pidsMax: pids.slice(pids.indexOf(": ") + 2).trim() };
}

/** The annotations of a test pod's container's OCI spec, as the runtime created it (crictl inspect). */
export async function runtimeAnnotations(c: Cluster, pod: string): Promise<Record<string, string>> {
  const ids = (await c.crictl("ps", "-q", "--label", `io.kubernetes.pod.name=${pod}`)).trim().split("\n").filter((l) => l !== "");
  if (ids.length !== 1) throw new Error(`cluster: pod ${pod} has ${ids.length} running containers in the runtime, not 1`);
  const info = JSON.parse(await c.crictl("inspect", ids[0]!)) as { info: { runtimeSpec?: { annotations?: Record<string, string> } } };
  return info.info.runtimeSpec?.annotations ?? {};
}

/**
 * Connections to the runtime's NRI socket now: each registered external plugin holds one. Read
 * from /proc/net/unix, where an accepted connection carries its listener's path (state 03:
 * connected; 01 is the listener itself).
 */
export function nriConnections(c: Cluster): number {
  return readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[7] === c.nriSocket && f[5] === "03").length;
}

/** The plugin pods of a release, from the API. */
export async function pluginPods(c: Cluster, namespace: string, release: string): Promise<KubeObject[]> {
  const list = await c.api.get<{ items: KubeObject[] }>(`/api/v1/namespaces/${namespace}/pods?labelSelector=app.kubernetes.io/instance=${release}`);
  return list.items.filter((p) => p.metadata.deletionTimestamp === undefined);
}

/** A pod's containers' memory (working set and RSS, bytes), from the kubelet's stats (through the API server's node proxy). */
export async function podMemory(c: Cluster, namespace: string, pod: string): Promise<{ workingSetBytes: number; rssBytes: number }> {
  interface Summary {
    pods: { podRef: { name: string; namespace: string }; containers?: { name: string; memory?: { workingSetBytes?: number; rssBytes?: number } }[] }[];
  }
  const s = await c.api.get<Summary>(`/api/v1/nodes/${NODE}/proxy/stats/summary`);
  const p = s.pods.find((x) => x.podRef.name === pod && x.podRef.namespace === namespace);
  if (p === undefined) throw new Error(`cluster: the kubelet's stats have no pod ${namespace}/${pod}`);
  const sum = (f: (m: { workingSetBytes?: number; rssBytes?: number }) => number | undefined) => (p.containers ?? []).reduce((n, x) => n + (f(x.memory ?? {}) ?? 0), 0);
  return { workingSetBytes: sum((m) => m.workingSetBytes), rssBytes: sum((m) => m.rssBytes) };
}

/** The host PID of the one running container of pod `pod` (crictl: the runtime's view). */
export async function containerPid(c: Cluster, pod: string): Promise<number> {
  const ids = (await c.crictl("ps", "-q", "--label", `io.kubernetes.pod.name=${pod}`)).trim().split("\n").filter((l) => l !== "");
  if (ids.length !== 1) throw new Error(`cluster: pod ${pod} has ${ids.length} running containers in the runtime, not 1`);
  return (JSON.parse(await c.crictl("inspect", ids[0]!)) as { info: { pid: number } }).info.pid;
}

/**
 * When a plugin pod became Ready after its registration (the time the runtime logged for its
 * `registered with` line), in milliseconds: the condition's time is truncated to whole seconds,
 * so it is known only as a range a second wide, cut at the registration (a pod Ready before it
 * registered is an error).
 */
export async function readyAfterRegistration(c: Cluster, namespace: string, pod: KubeObject): Promise<{ readonly fromMs: number; readonly toMs: number }> {
  const lines = (await c.kubectl("-n", namespace, "logs", "--timestamps", pod.metadata.name)).split("\n");
  const registered = lines.find((l) => / registered/.test(l))?.split(" ")[0];
  const conds = ((pod.status?.conditions ?? []) as { type: string; lastTransitionTime: string }[]).find((x) => x.type === "Ready");
  if (registered === undefined || conds === undefined) throw new Error(`cluster: pod ${pod.metadata.name} has no registration line or no Ready condition`);
  const second = Date.parse(conds.lastTransitionTime) - Date.parse(registered);
  if (second + 1000 <= 0) throw new Error(`cluster: pod ${pod.metadata.name} was Ready at ${conds.lastTransitionTime}, before it registered at ${registered}`);
  return { fromMs: Math.max(0, second), toMs: second + 1000 };
}
