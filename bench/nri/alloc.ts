/**
 * Bytes a process allocates on its JavaScript heap over a stretch of time: the heap's growth plus
 * what each garbage collection in between freed, from V8's per-collection heap statistics.
 */
import { GCProfiler, getHeapStatistics } from "node:v8";

interface GcRecord {
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}

/** Starts counting; `read()` returns the bytes and collections since the last start and stops. */
export class AllocationMeter {
  #profiler: GCProfiler | undefined;
  #used0 = 0;

  start(): void {
    this.#profiler = new GCProfiler();
    this.#used0 = getHeapStatistics().used_heap_size;
    this.#profiler.start();
  }

  read(): { alloc_bytes: number; gcs: number } {
    const used1 = getHeapStatistics().used_heap_size;
    const result = this.#profiler?.stop() as { statistics: GcRecord[] } | undefined;
    this.#profiler = undefined;
    const stats = result?.statistics ?? [];
    const freed = stats.reduce((a, s) => a + (s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize), 0);
    return { alloc_bytes: used1 - this.#used0 + freed, gcs: stats.length };
  }
}
