import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "./support.js";

/** What the lifecycle saw inside the container, for the checks. */
export interface Observed {
  podId: string;
  containerId: string;
  /** `VAR=value` lines of the container's environment. */
  env: string[];
  /** The annotations of the container's OCI spec. */
  annotations: Record<string, string>;
  /** The CPU cgroup file read after the CPU update, and its value. */
  cpu: { file: string; value: number };
}

/** The CPU shares the lifecycle asks for in UpdateContainerResources and UpdatePodSandboxResources. */
export const REQUESTED_CPU_SHARES = 256;

/** Where the container's CPU weight lives: cgroup v1 (split or joint controllers), then v2. */
const CPU_FILES = ["/sys/fs/cgroup/cpu/cpu.shares", "/sys/fs/cgroup/cpu,cpuacct/cpu.shares", "/sys/fs/cgroup/cpu.weight"];

/** The cgroup value a runc container shows for `shares`: itself on v1, runc's weight conversion on v2. */
export function expectedCpuValue(file: string, shares: number): number {
  return file.endsWith("cpu.weight") ? 1 + Math.floor(((shares - 2) * 9999) / 262142) : shares;
}

/**
 * The NRI events `lifecycle` makes a runtime send a plugin subscribed to all of them, in order:
 * the pod's resources are updated before the container stops.
 */
export const LIFECYCLE_EVENTS: readonly string[] = [
  "RunPodSandbox", "CreateContainer", "ValidateContainerAdjustment", "PostCreateContainer", "StartContainer",
  "PostStartContainer", "UpdateContainer", "PostUpdateContainer", "UpdatePodSandbox", "PostUpdatePodSandbox",
  "StopContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox",
];

/** The CRI tools and where the runtime serves CRI. */
export interface CriTools {
  crictl: string;
  criClient: string;
  image: string;
  /** unix:///path of the runtime's CRI socket. */
  endpoint: string;
  /** The runtime's log, named in every failure message. */
  log: string;
}

/**
 * One host-network pod and one container through CRI, with crictl and the CRI client:
 * run, create, start, read env/annotations, update the container and the pod's resources, stop
 * and remove both. Each failing step throws naming the crictl command and the runtime's log.
 */
export async function lifecycle(t: CriTools, dir: string, tag: string): Promise<Observed> {
  const config = join(dir, "crictl.yaml");
  writeFileSync(config, `runtime-endpoint: ${t.endpoint}\nimage-endpoint: ${t.endpoint}\ntimeout: 60\n`);
  const crictl = (step: string, ...args: string[]) => run(t.crictl, ["--config", config, ...args], `crictl ${step}`, t.log, 90_000).then((s) => s.trim());

  const podFile = join(dir, `pod-${tag}.json`);
  const ctrFile = join(dir, `ctr-${tag}.json`);
  writeFileSync(
    podFile,
    JSON.stringify({
      metadata: { name: `nri-wire-${tag}`, namespace: "nri-wire", uid: `nri-wire-${tag}-uid`, attempt: 0 },
      log_directory: join(dir, "pod-logs"),
      // Host network: this machine has no CNI. Container PID namespaces: no infra container needed.
      linux: { security_context: { namespace_options: { network: 2, pid: 1, ipc: 0 } } },
    }),
  );
  writeFileSync(
    ctrFile,
    JSON.stringify({
      metadata: { name: `probe-${tag}` },
      image: { image: t.image },
      command: ["/probe", "pause"],
      log_path: "probe.log",
      // The same namespaces as the pod: CRI-O has no infra container to share a pod PID namespace.
      linux: { resources: { cpu_shares: 1024 }, security_context: { namespace_options: { network: 2, pid: 1, ipc: 0 } } },
    }),
  );

  const podId = await crictl("runp", "runp", podFile);
  const containerId = await crictl("create", "create", podId, ctrFile, podFile);
  await crictl("start", "start", containerId);
  const env = (await crictl("exec env", "exec", containerId, "/probe", "env")).split("\n");
  const inspect = JSON.parse(await crictl("inspect", "inspect", containerId)) as { info?: { runtimeSpec?: { annotations?: Record<string, string> } } };
  await crictl("update", "update", "--cpu-share", String(REQUESTED_CPU_SHARES), containerId);
  const cpuLine = await crictl("exec cat", "exec", containerId, "/probe", "cat", ...CPU_FILES);
  await run(t.criClient, ["--endpoint", t.endpoint, "update-pod-sandbox-resources", podId, String(REQUESTED_CPU_SHARES)], "cri-client update-pod-sandbox-resources", t.log);
  await crictl("stop", "stop", containerId);
  await crictl("rm", "rm", containerId);
  await crictl("stopp", "stopp", podId);
  await crictl("rmp", "rmp", podId);

  const [file = "", value = ""] = cpuLine.split(": ");
  return { podId, containerId, env, annotations: inspect.info?.runtimeSpec?.annotations ?? {}, cpu: { file, value: Number(value) } };
}

/** Removes every pod the runtime still has (after a failed lifecycle), so its shims exit. */
export async function removeAllPods(t: CriTools, dir: string): Promise<void> {
  const config = join(dir, "crictl.yaml");
  await run(t.crictl, ["--config", config, "rmp", "--force", "--all"], "crictl rmp --force --all", t.log).catch(() => undefined);
}
