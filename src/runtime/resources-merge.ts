import { create } from "../api/messages.js";
import { Field, type LinuxCPU, type LinuxMemory, type LinuxResources } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { make } from "./make.js";
import type { OwnershipClaims } from "./ownership-claims.js";

/** The wrapper messages (`OptionalInt64`, ...) of memory and CPU fields. */
interface Wrapper {
  readonly $typeName: string;
  value: unknown;
}

/** A fresh wrapper with the same value, as Go's `Int64(v.GetValue())` builds (unknown fields dropped). */
export function rewrap<W extends Wrapper>(w: W): W {
  const value = Array.isArray(w.value) ? [...(w.value as unknown[])] : w.value;
  return { $typeName: w.$typeName, value } as W;
}

type MemoryKey = "limit" | "reservation" | "swap" | "kernel" | "kernelTcp" | "swappiness" | "disableOomKiller" | "useHierarchy";
type CpuWrapperKey = "shares" | "quota" | "period" | "realtimeRuntime" | "realtimePeriod";

/** Memory fields in the order Go claims them, with the field each claims. */
const MEMORY: readonly (readonly [MemoryKey, Field])[] = [
  ["limit", Field.MemLimit],
  ["reservation", Field.MemReservation],
  ["swap", Field.MemSwapLimit],
  ["kernel", Field.MemKernelLimit],
  ["kernelTcp", Field.MemTCPLimit],
  ["swappiness", Field.MemSwappiness],
  ["disableOomKiller", Field.MemDisableOomKiller],
  ["useHierarchy", Field.MemUseHierarchy],
];

/** CPU wrapper fields in Go's claim order; `cpus` and `mems` (plain strings) follow. */
const CPU: readonly (readonly [CpuWrapperKey, Field])[] = [
  ["shares", Field.CPUShares],
  ["quota", Field.CPUQuota],
  ["period", Field.CPUPeriod],
  ["realtimeRuntime", Field.CPURealtimeRuntime],
  ["realtimePeriod", Field.CPURealtimePeriod],
];

/**
 * Applies a plugin's memory settings: each present wrapper claims its field for container `id`
 * and is set on `target` (and on `reply` when given). The first conflict throws.
 */
export function mergeMemory(owners: OwnershipClaims, mem: LinuxMemory | undefined, target: LinuxMemory, reply: LinuxMemory | undefined, id: string, plugin: string): void {
  if (mem === undefined) return;
  for (const [key, field] of MEMORY) {
    const v = mem[key];
    if (v === undefined) continue;
    owners.claim(id, field, plugin);
    (target as Record<MemoryKey, Wrapper | undefined>)[key] = rewrap(v);
    if (reply !== undefined) (reply as Record<MemoryKey, Wrapper | undefined>)[key] = rewrap(v);
  }
}

/** Applies a plugin's CPU settings like `mergeMemory`; `cpus` and `mems` count when non-empty. */
export function mergeCpu(owners: OwnershipClaims, cpu: LinuxCPU | undefined, target: LinuxCPU, reply: LinuxCPU | undefined, id: string, plugin: string): void {
  if (cpu === undefined) return;
  for (const [key, field] of CPU) {
    const v = cpu[key];
    if (v === undefined) continue;
    owners.claim(id, field, plugin);
    (target as Record<CpuWrapperKey, Wrapper | undefined>)[key] = rewrap(v);
    if (reply !== undefined) (reply as Record<CpuWrapperKey, Wrapper | undefined>)[key] = rewrap(v);
  }
  if (cpu.cpus !== "") {
    owners.claim(id, Field.CPUSetCPUs, plugin);
    target.cpus = cpu.cpus;
    if (reply !== undefined) reply.cpus = cpu.cpus;
  }
  if (cpu.mems !== "") {
    owners.claim(id, Field.CPUSetMems, plugin);
    target.mems = cpu.mems;
    if (reply !== undefined) reply.mems = cpu.mems;
  }
}

/** Go's `LinuxResources.Copy`: a deep copy keeping which optional parts are present. */
export function copyResources(r: LinuxResources): LinuxResources {
  const o = create(v1beta1.LinuxResources);
  if (r.memory !== undefined) {
    const m = create(v1beta1.LinuxMemory);
    for (const [key] of MEMORY) {
      const v = r.memory[key];
      if (v !== undefined) (m as Record<MemoryKey, Wrapper | undefined>)[key] = rewrap(v);
    }
    o.memory = m;
  }
  if (r.cpu !== undefined) {
    const c = make(v1beta1.LinuxCPU, { cpus: r.cpu.cpus, mems: r.cpu.mems });
    for (const [key] of CPU) {
      const v = r.cpu[key];
      if (v !== undefined) (c as Record<CpuWrapperKey, Wrapper | undefined>)[key] = rewrap(v);
    }
    o.cpu = c;
  }
  o.hugepageLimits = r.hugepageLimits.map((l) => make(v1beta1.HugepageLimit, { pageSize: l.pageSize, limit: l.limit }));
  o.unified = { ...r.unified };
  if (r.pids !== undefined) o.pids = make(v1beta1.LinuxPids, { limit: r.pids.limit });
  if (r.blockioClass !== undefined) o.blockioClass = rewrap(r.blockioClass);
  if (r.rdtClass !== undefined) o.rdtClass = rewrap(r.rdtClass);
  o.devices = r.devices.map((d) => {
    const c = make(v1beta1.LinuxDeviceCgroup, { allow: d.allow, type: d.type, access: d.access });
    if (d.major !== undefined) c.major = rewrap(d.major);
    if (d.minor !== undefined) c.minor = rewrap(d.minor);
    return c;
  });
  return o;
}
