import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What a kubelet changes on the host outside its private directories, and how the suite puts
 * it back: the kernel settings it tunes, the `kubepods` cgroups it creates, the links it keeps
 * in /var/log/containers and its device manager's socket under /var/lib/kubelet.
 */

/** The kernel settings the kubelet sets at start when they differ (it does not protect kernel defaults here). */
const SYSCTLS = ["vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"];

/** The kubelet's fixed directory of links to container logs. */
export const CONTAINER_LOG_LINKS = "/var/log/containers";

/** The kubelet's default root: its device manager keeps its socket there whatever the root directory. */
export const KUBELET_DEFAULT_ROOT = "/var/lib/kubelet";

/** Whether the host has the unified cgroup hierarchy (cgroup v2) at /sys/fs/cgroup. */
export function cgroupV2(): boolean {
  // CGROUP2_SUPER_MAGIC
  return statfsSync("/sys/fs/cgroup").type === 0x63677270;
}

/** Mount points of cgroup hierarchies (v1 and v2). */
function cgroupMounts(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((l) => / - cgroup2? /.test(l))
    .map((l) => l.split(" ")[4]!);
}

/** Removes the directories of a tree that hold no file, deepest first. */
function removeEmptyTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeEmptyTree(join(dir, e.name));
  if (readdirSync(dir).length === 0) rmdirSync(dir);
}

/** The kubelet's `kubepods` cgroups, in every hierarchy, that exist now. */
export function kubepodsCgroups(): string[] {
  return cgroupMounts()
    .map((m) => join(m, "kubepods"))
    .filter((d) => existsSync(d));
}

/** Removes a cgroup tree, deepest first (a cgroup directory is removed with rmdir, its files go with it). */
function removeCgroupTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeCgroupTree(join(dir, e.name));
  rmdirSync(dir);
}

/** The host state a kubelet run changes, recorded before it starts. */
export interface HostState {
  readonly sysctls: ReadonlyMap<string, string>;
  /** Fixed host directories the runtime uses (its shims' sockets) that did not exist before. */
  readonly createdRuntimePaths: readonly string[];
  readonly logLinksExisted: boolean;
  readonly defaultRootExisted: boolean;
}

/**
 * Records the host state, `runtimePaths` among it (the runtime's fixed directories); throws when
 * `kubepods` cgroups exist (another kubelet runs here).
 */
export function recordHostState(runtimePaths: readonly string[]): HostState {
  const existing = kubepodsCgroups();
  if (existing.length > 0) throw new Error(`cluster: ${existing.join(", ")} exists: another kubelet runs on this host`);
  const sysctls = new Map<string, string>();
  for (const s of SYSCTLS) {
    const f = join("/proc/sys", s);
    if (existsSync(f)) sysctls.set(s, readFileSync(f, "utf8").trim());
  }
  return { sysctls, createdRuntimePaths: runtimePaths.filter((p) => !existsSync(p)), logLinksExisted: existsSync(CONTAINER_LOG_LINKS), defaultRootExisted: existsSync(KUBELET_DEFAULT_ROOT) };
}

/**
 * Puts the host back after the kubelet and the runtime stopped: the kernel settings, the
 * `kubepods` cgroups, the log links that point into `dir`, /var/lib/kubelet and the runtime's
 * fixed directories when they were not there before. Returns what could not be undone.
 */
export function restoreHostState(state: HostState, dir: string): string[] {
  const left: string[] = [];
  for (const [s, value] of state.sysctls) {
    const f = join("/proc/sys", s);
    try {
      if (readFileSync(f, "utf8").trim() !== value) writeFileSync(f, value);
    } catch (e) {
      left.push(`sysctl ${s}: ${(e as Error).message}`);
    }
  }
  for (const cg of kubepodsCgroups()) {
    try {
      removeCgroupTree(cg);
    } catch (e) {
      left.push(`cgroup ${cg}: ${(e as Error).message}`);
    }
  }
  if (existsSync(CONTAINER_LOG_LINKS)) {
    for (const e of readdirSync(CONTAINER_LOG_LINKS)) {
      const link = join(CONTAINER_LOG_LINKS, e);
      if (lstatSync(link).isSymbolicLink() && readlinkSync(link).startsWith(`${dir}/`)) rmSync(link);
    }
    if (!state.logLinksExisted && readdirSync(CONTAINER_LOG_LINKS).length === 0) rmdirSync(CONTAINER_LOG_LINKS);
  }
  if (!state.defaultRootExisted) rmSync(KUBELET_DEFAULT_ROOT, { recursive: true, force: true });
  // Only while empty: another runtime on the host may have started using it since.
  for (const p of state.createdRuntimePaths) if (existsSync(p)) removeEmptyTree(p);
  return left;
}
