import {
  type LinuxCPU,
  type LinuxMemory,
  type LinuxResources,
} from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { type Int64Like, int64, uint64 } from "./integers.js";
import { setOwn } from "../wire/reader.js";

const MEM = "linux.resources.memory";
const CPU = "linux.resources.cpu";

/**
 * The resource setters container adjustments and container updates share (both carry
 * `linux.resources`), named as the Go stub's helpers are. Every method returns the builder.
 */
export abstract class ResourceSetters {
  /** The LinuxResources being built, created on first use. */
  protected abstract resources(): LinuxResources;

  private memory(): LinuxMemory {
    const r = this.resources();
    return (r.memory ??= v1beta1.LinuxMemory.create());
  }

  private cpu(): LinuxCPU {
    const r = this.resources();
    return (r.cpu ??= v1beta1.LinuxCPU.create());
  }

  /** Memory limit in bytes. */
  setLinuxMemoryLimit(bytes: Int64Like): this {
    this.memory().limit = v1beta1.OptionalInt64.create({ value: int64(bytes, `${MEM}.limit`) });
    return this;
  }

  /** Memory reservation (soft limit) in bytes. */
  setLinuxMemoryReservation(bytes: Int64Like): this {
    this.memory().reservation = v1beta1.OptionalInt64.create({ value: int64(bytes, `${MEM}.reservation`) });
    return this;
  }

  /** Memory plus swap limit in bytes. */
  setLinuxMemorySwap(bytes: Int64Like): this {
    this.memory().swap = v1beta1.OptionalInt64.create({ value: int64(bytes, `${MEM}.swap`) });
    return this;
  }

  /** Kernel memory limit in bytes (cgroup v1 only). */
  setLinuxMemoryKernel(bytes: Int64Like): this {
    this.memory().kernel = v1beta1.OptionalInt64.create({ value: int64(bytes, `${MEM}.kernel`) });
    return this;
  }

  /** Kernel TCP buffer memory limit in bytes (cgroup v1 only). */
  setLinuxMemoryKernelTCP(bytes: Int64Like): this {
    this.memory().kernelTcp = v1beta1.OptionalInt64.create({ value: int64(bytes, `${MEM}.kernel_tcp`) });
    return this;
  }

  /** Swappiness, 0 to 100 on Linux (the wire holds any uint64). */
  setLinuxMemorySwappiness(value: Int64Like): this {
    this.memory().swappiness = v1beta1.OptionalUInt64.create({ value: uint64(value, `${MEM}.swappiness`) });
    return this;
  }

  /** Disables the OOM killer for the container. */
  setLinuxMemoryDisableOomKiller(): this {
    this.memory().disableOomKiller = v1beta1.OptionalBool.create({ value: true });
    return this;
  }

  /** Enables hierarchical memory accounting. */
  setLinuxMemoryUseHierarchy(): this {
    this.memory().useHierarchy = v1beta1.OptionalBool.create({ value: true });
    return this;
  }

  /** CPU shares (relative weight). */
  setLinuxCPUShares(shares: Int64Like): this {
    this.cpu().shares = v1beta1.OptionalUInt64.create({ value: uint64(shares, `${CPU}.shares`) });
    return this;
  }

  /** CFS quota in microseconds per period; -1 for none. */
  setLinuxCPUQuota(us: Int64Like): this {
    this.cpu().quota = v1beta1.OptionalInt64.create({ value: int64(us, `${CPU}.quota`) });
    return this;
  }

  /** CFS period in microseconds. */
  setLinuxCPUPeriod(us: Int64Like): this {
    this.cpu().period = v1beta1.OptionalUInt64.create({ value: uint64(us, `${CPU}.period`) });
    return this;
  }

  /** Realtime runtime in microseconds per realtime period. */
  setLinuxCPURealtimeRuntime(us: Int64Like): this {
    this.cpu().realtimeRuntime = v1beta1.OptionalInt64.create({ value: int64(us, `${CPU}.realtime_runtime`) });
    return this;
  }

  /** Realtime period in microseconds. */
  setLinuxCPURealtimePeriod(us: Int64Like): this {
    this.cpu().realtimePeriod = v1beta1.OptionalUInt64.create({ value: uint64(us, `${CPU}.realtime_period`) });
    return this;
  }

  /** The cpuset CPUs, in list format (`0-3,7`). */
  setLinuxCPUSetCPUs(cpus: string): this {
    this.cpu().cpus = cpus;
    return this;
  }

  /** The cpuset memory nodes, in list format. */
  setLinuxCPUSetMems(mems: string): this {
    this.cpu().mems = mems;
    return this;
  }

  /** The maximum number of processes; 0 or less for no limit. (The Go runtimes, v0.11.0 to v0.12.5, drop it from updates.) */
  setLinuxPidLimits(limit: Int64Like): this {
    this.resources().pids = v1beta1.LinuxPids.create({ limit: int64(limit, "linux.resources.pids.limit") });
    return this;
  }

  /** Adds a hugepage limit: `pageSize` such as `2MB`, `limit` in bytes. */
  addLinuxHugepageLimit(pageSize: string, limit: Int64Like): this {
    const r = this.resources();
    r.hugepageLimits.push(v1beta1.HugepageLimit.create({ pageSize, limit: uint64(limit, `linux.resources.hugepage_limits[${r.hugepageLimits.length}].limit`) }));
    return this;
  }

  /** The block I/O class. */
  setLinuxBlockIOClass(cls: string): this {
    this.resources().blockioClass = v1beta1.OptionalString.create({ value: cls });
    return this;
  }

  /** The RDT class. */
  setLinuxRDTClass(cls: string): this {
    this.resources().rdtClass = v1beta1.OptionalString.create({ value: cls });
    return this;
  }

  /** Sets one cgroup v2 unified resource (`memory.high`, ...). */
  addLinuxUnified(key: string, value: string): this {
    setOwn(this.resources().unified, key, value);
    return this;
  }
}
