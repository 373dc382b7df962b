/**
 * A private containerd v2.4.2 with CRI and NRI, as the real-runtime suite (test/runtimes) starts
 * it, for the bench scripts of this directory. Needs root on Linux and Go; builds (or finds
 * cached) the runtime with scripts/runtimes/build.sh.
 */
import { existsSync, rmSync } from "node:fs";
import { containerd } from "../../test/runtimes/containerd.js";
import { removeAllPods } from "../../test/runtimes/lifecycle.js";
import type { RunningRuntime } from "../../test/runtimes/runtime.js";
import { unmet } from "../../test/support/prerequisites.js";
import { type Built, build, logDir, readText, removeWorkDir, RUNTIME_NEEDS, waitUntil, workDir } from "../../test/runtimes/support.js";

export interface Containerd {
  built: Built;
  rt: RunningRuntime;
  /** Its private directory (state, sockets) and its log directory. */
  dir: string;
  logs: string;
  /** Times `needle` occurs in its log so far. */
  logCount(needle: string): number;
  /** Resolves once `needle` occurs in its log at least `count` times. */
  waitLog(needle: string, count: number, what: string): Promise<void>;
  /** Removes every pod, stops it, removes its directory; throws naming what it left behind. */
  down(): Promise<void>;
}

export async function upContainerd(): Promise<Containerd> {
  const absent = unmet(RUNTIME_NEEDS);
  if (absent.length > 0) throw new Error(`bench: containerd ${absent.map((a) => a.reason).join("; ")}`);
  const created = ["/run/containerd"].filter((h) => !existsSync(h));
  const built = await build(["containerd"]);
  const dir = workDir("ctdb");
  const logs = logDir(built, "containerd-bench");
  const rt = await containerd(built).start({ dir, logs }, 1);
  const logCount = (needle: string): number => readText(rt.log).split(needle).length - 1;
  return {
    built,
    rt,
    dir,
    logs,
    logCount,
    waitLog: (needle, count, what) => waitUntil(() => logCount(needle) >= count, what, 60_000, () => `; log: ${rt.log}`),
    async down() {
      await removeAllPods({ crictl: built.CRICTL!, criClient: built.CRI_CLIENT!, image: built.IMAGE!, endpoint: rt.endpoint, log: rt.log }, dir);
      await rt.stop();
      const leaks = await removeWorkDir(dir);
      for (const h of created) rmSync(h, { recursive: true, force: true });
      if (leaks.length > 0) throw new Error(`bench: containerd left behind: ${leaks.join("; ")}`);
    },
  };
}
