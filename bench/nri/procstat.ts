/**
 * Per-process figures from /proc: CPU time (every thread's time on a CPU, in ns, from
 * /proc/PID/task/TID/schedstat, finer than the clock ticks of /proc/PID/stat), anonymous memory
 * (RssAnon: what the process holds privately; the file-backed rest is mostly the engine binary,
 * whose pages every process running it shares), peak RSS (VmHWM) and proportional set size
 * (smaps_rollup Pss).
 */
import { readFileSync, readdirSync } from "node:fs";

/** CPU time of a live process so far, in ns, over all its threads. */
export function cpuNanos(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return total;
}

function kib(file: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(file, "utf8"));
  if (m === null) throw new Error(`bench: no ${field} in ${file}`);
  return Number(m[1]);
}

/** A live process's anonymous resident memory now, in KiB; undefined once it is gone. */
export function anonKiB(pid: number): number | undefined {
  try {
    return kib(`/proc/${pid}/status`, "RssAnon");
  } catch {
    return undefined;
  }
}

/** Peak RSS and current PSS of a live process, in KiB. */
export function memoryKiB(pid: number): { hwm: number; pss: number } {
  return { hwm: kib(`/proc/${pid}/status`, "VmHWM"), pss: kib(`/proc/${pid}/smaps_rollup`, "Pss") };
}
