import { Field, type OwningPlugins } from "../../gen/v1beta1/api_lite.js";

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

type Owners = OwningPlugins | undefined;

/** The plugin that set single-valued `field` of container `id`. */
export function fieldOwner(owners: Owners, id: string, field: Field): string | undefined {
  return owners?.owners[id]?.simple[field];
}

/** The plugin that set entry `key` of keyed `field` of container `id`. */
export function keyedFieldOwner(owners: Owners, id: string, field: Field, key: string): string | undefined {
  const entries = owners?.owners[id]?.compound[field]?.owners;
  return entries !== undefined && Object.hasOwn(entries, key) ? entries[key] : undefined;
}

export const annotationOwner = (o: Owners, id: string, key: string): string | undefined => keyedFieldOwner(o, id, Field.Annotations, key);
export const mountOwner = (o: Owners, id: string, destination: string): string | undefined => keyedFieldOwner(o, id, Field.Mounts, destination);
export const hooksOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.OciHooks);
export const deviceOwner = (o: Owners, id: string, path: string): string | undefined => keyedFieldOwner(o, id, Field.Devices, path);
export const cdiDeviceOwner = (o: Owners, id: string, name: string): string | undefined => keyedFieldOwner(o, id, Field.CdiDevices, name);
export const envOwner = (o: Owners, id: string, name: string): string | undefined => keyedFieldOwner(o, id, Field.Env, name);
export const argsOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.Args);
export const memLimitOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemLimit);
export const memReservationOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemReservation);
export const memSwapLimitOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemSwapLimit);
export const memKernelLimitOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemKernelLimit);
export const memTCPLimitOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemTCPLimit);
export const memSwappinessOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemSwappiness);
export const memDisableOomKillerOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemDisableOomKiller);
export const memUseHierarchyOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemUseHierarchy);
export const cpuSharesOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CPUShares);
export const cpuQuotaOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CPUQuota);
export const cpuPeriodOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CPUPeriod);
export const cpuRealtimeRuntimeOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CPURealtimeRuntime);
export const cpuRealtimePeriodOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CPURealtimePeriod);
export const cpuSetCpusOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CPUSetCPUs);
export const cpuSetMemsOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CPUSetMems);
export const pidsLimitOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.PidsLimit);
export const hugepageLimitOwner = (o: Owners, id: string, pageSize: string): string | undefined => keyedFieldOwner(o, id, Field.HugepageLimits, pageSize);
export const blockioClassOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.BlockioClass);
export const rdtClassOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.RdtClass);
export const cgroupsUnifiedOwner = (o: Owners, id: string, key: string): string | undefined => keyedFieldOwner(o, id, Field.CgroupsUnified, key);
export const cgroupsPathOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.CgroupsPath);
export const oomScoreAdjOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.OomScoreAdj);
export const rlimitOwner = (o: Owners, id: string, type: string): string | undefined => keyedFieldOwner(o, id, Field.Rlimits, type);
export const ioPriorityOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.IoPriority);
export const seccompPolicyOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.SeccompPolicy);
export const namespaceOwner = (o: Owners, id: string, type: string): string | undefined => keyedFieldOwner(o, id, Field.Namespace, type);
export const sysctlOwner = (o: Owners, id: string, key: string): string | undefined => keyedFieldOwner(o, id, Field.Sysctl, key);
export const linuxNetDeviceOwner = (o: Owners, id: string, path: string): string | undefined => keyedFieldOwner(o, id, Field.LinuxNetDevices, path);
export const linuxSchedulerOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.LinuxSched);
export const rdtClosIdOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.RdtClosID);
export const rdtSchemataOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.RdtSchemata);
export const rdtEnableMonitoringOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.RdtEnableMonitoring);
export const memoryPolicyOwner = (o: Owners, id: string): string | undefined => fieldOwner(o, id, Field.MemoryPolicy);
