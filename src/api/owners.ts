import { Field, type FieldOwners, type OwningPlugins } from "../../gen/v1beta1/api_lite.js";

/*
 * Owner lookups for validators: which plugin set a field of a container during the event being
 * validated (ValidateContainerAdjustmentRequest.owners), one function per field as Go's
 * pkg/api offers them. Each returns the plugin's id (`10-mine`), or undefined when no plugin set
 * the field. A plugin that removed the field shows as its id marked for removal (`-10-mine`,
 * see markedForRemoval); hooks, which never conflict, as the comma-joined ids of all
 * contributors. Keyed fields take the key: an annotation's or a sysctl's key, a mount's
 * destination, a device's path, an environment variable's name, an rlimit's or a namespace's
 * type, a hugepage limit's page size, a unified cgroup's key, a CDI device's name.
 */

/** The owners of a validation request (`req.owners`), which may be absent. */
export type Owners = OwningPlugins | undefined;

/** The plugin that set single-valued `field` of container `id`. */
export function fieldOwner(owners: Owners, id: string, field: Field): string | undefined {
  return ownersOf(owners, id)?.simple[field];
}

/** The plugin that set entry `key` of keyed `field` of container `id`. */
export function keyedFieldOwner(owners: Owners, id: string, field: Field, key: string): string | undefined {
  const entries = keyedFieldOwners(owners, id, field);
  return entries !== undefined && Object.hasOwn(entries, key) ? entries[key] : undefined;
}

/** Every entry's owner of keyed `field` of container `id` (key → plugin), if any plugin touched the field. */
export function keyedFieldOwners(owners: Owners, id: string, field: Field): Readonly<Record<string, string>> | undefined {
  return ownersOf(owners, id)?.compound[field]?.owners;
}

/** The owners of container `id`'s fields; a container id is never looked up in the map's prototype. */
function ownersOf(owners: Owners, id: string): FieldOwners | undefined {
  return owners !== undefined && Object.hasOwn(owners.owners, id) ? owners.owners[id] : undefined;
}

/** The plugin that set the annotation `key` of container `id`. */
export function annotationOwner(owners: Owners, id: string, key: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.Annotations, key);
}

/** The plugin that set the mount at `destination` of container `id`. */
export function mountOwner(owners: Owners, id: string, destination: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.Mounts, destination);
}

/** The plugin that set OCI hooks (every contributor, comma-joined) of container `id`. */
export function hooksOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.OciHooks);
}

/** The plugin that set the device at `path` of container `id`. */
export function deviceOwner(owners: Owners, id: string, path: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.Devices, path);
}

/** The plugin that set the CDI device `name` of container `id`. */
export function cdiDeviceOwner(owners: Owners, id: string, name: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.CdiDevices, name);
}

/** The plugin that set the environment variable `name` of container `id`. */
export function envOwner(owners: Owners, id: string, name: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.Env, name);
}

/** The plugin that set the arguments of container `id`. */
export function argsOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.Args);
}

/** The plugin that set the memory limit of container `id`. */
export function memLimitOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemLimit);
}

/** The plugin that set the memory reservation of container `id`. */
export function memReservationOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemReservation);
}

/** The plugin that set the memory+swap limit of container `id`. */
export function memSwapLimitOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemSwapLimit);
}

/** The plugin that set the kernel memory limit of container `id`. */
export function memKernelLimitOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemKernelLimit);
}

/** The plugin that set the kernel TCP memory limit of container `id`. */
export function memTCPLimitOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemTCPLimit);
}

/** The plugin that set the memory swappiness of container `id`. */
export function memSwappinessOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemSwappiness);
}

/** The plugin that set whether the OOM killer is disabled of container `id`. */
export function memDisableOomKillerOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemDisableOomKiller);
}

/** The plugin that set the memory use-hierarchy flag of container `id`. */
export function memUseHierarchyOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemUseHierarchy);
}

/** The plugin that set the CPU shares of container `id`. */
export function cpuSharesOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CPUShares);
}

/** The plugin that set the CPU quota of container `id`. */
export function cpuQuotaOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CPUQuota);
}

/** The plugin that set the CPU period of container `id`. */
export function cpuPeriodOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CPUPeriod);
}

/** The plugin that set the CPU realtime runtime of container `id`. */
export function cpuRealtimeRuntimeOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CPURealtimeRuntime);
}

/** The plugin that set the CPU realtime period of container `id`. */
export function cpuRealtimePeriodOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CPURealtimePeriod);
}

/** The plugin that set the cpuset CPUs of container `id`. */
export function cpuSetCpusOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CPUSetCPUs);
}

/** The plugin that set the cpuset memory nodes of container `id`. */
export function cpuSetMemsOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CPUSetMems);
}

/** The plugin that set the pids limit of container `id`. */
export function pidsLimitOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.PidsLimit);
}

/** The plugin that set the hugepage limit of `pageSize` of container `id`. */
export function hugepageLimitOwner(owners: Owners, id: string, pageSize: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.HugepageLimits, pageSize);
}

/** The plugin that set the block I/O class of container `id`. */
export function blockioClassOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.BlockioClass);
}

/** The plugin that set the RDT class of container `id`. */
export function rdtClassOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.RdtClass);
}

/** The plugin that set the unified cgroup entry `key` of container `id`. */
export function cgroupsUnifiedOwner(owners: Owners, id: string, key: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.CgroupsUnified, key);
}

/** The plugin that set the cgroups path of container `id`. */
export function cgroupsPathOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.CgroupsPath);
}

/** The plugin that set the OOM score adjustment of container `id`. */
export function oomScoreAdjOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.OomScoreAdj);
}

/** The plugin that set the rlimit of `type` (`RLIMIT_NOFILE`) of container `id`. */
export function rlimitOwner(owners: Owners, id: string, type: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.Rlimits, type);
}

/** The plugin that set the I/O priority of container `id`. */
export function ioPriorityOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.IoPriority);
}

/** The plugin that set the seccomp policy of container `id`. */
export function seccompPolicyOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.SeccompPolicy);
}

/** The plugin that set the namespace of `type` of container `id`. */
export function namespaceOwner(owners: Owners, id: string, type: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.Namespace, type);
}

/** The plugin that set the sysctl `key` of container `id`. */
export function sysctlOwner(owners: Owners, id: string, key: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.Sysctl, key);
}

/** The plugin that set the network device at host `path` of container `id`. */
export function linuxNetDeviceOwner(owners: Owners, id: string, path: string): string | undefined {
  return keyedFieldOwner(owners, id, Field.LinuxNetDevices, path);
}

/** The plugin that set the scheduling policy of container `id`. */
export function linuxSchedulerOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.LinuxSched);
}

/** The plugin that set the RDT CLOS id of container `id`. */
export function rdtClosIdOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.RdtClosID);
}

/** The plugin that set the RDT schemata of container `id`. */
export function rdtSchemataOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.RdtSchemata);
}

/** The plugin that set whether RDT monitoring is enabled of container `id`. */
export function rdtEnableMonitoringOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.RdtEnableMonitoring);
}

/** The plugin that set the memory policy of container `id`. */
export function memoryPolicyOwner(owners: Owners, id: string): string | undefined {
  return fieldOwner(owners, id, Field.MemoryPolicy);
}
