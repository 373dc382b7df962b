/**
 * Running a platform's programs on the build host: directly for the host's own platform, through
 * qemu-user for another (`qemu-aarch64-static`, from Debian's qemu-user-static), which finds the
 * foreign loader and libraries in the host's multiarch directories. The build runs each
 * platform's engine this way, to check the entry and to make the code caches it ships.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { ARCHITECTURES, hostPlatform, type Platform, platformName } from "./platform.js";

/** How a program ended. */
export interface RunResult {
  /** The exit code; null when it was killed. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Whether it ran out of time and was killed. */
  readonly timedOut: boolean;
}

/** Runs programs built for one platform. */
export interface PlatformRunner {
  readonly platform: Platform;
  /** The qemu-user binary that runs them, or undefined when the host runs them itself. */
  readonly emulator: string | undefined;
  run(file: string, args: readonly string[], o: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<RunResult>;
}

/** The first executable named `names` on `path`. */
function onPath(names: readonly string[], path: string): string | undefined {
  for (const name of names) {
    for (const dir of path.split(delimiter)) {
      if (dir === "") continue;
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** The runner of platform `p`'s programs; throws naming what to install when it needs qemu-user and finds none. */
export function platformRunner(p: Platform, host: Platform = hostPlatform(), path: string = process.env.PATH ?? ""): PlatformRunner {
  let emulator: string | undefined;
  if (p.architecture !== host.architecture) {
    const q = ARCHITECTURES[p.architecture].qemu;
    emulator = onPath([`qemu-${q}-static`, `qemu-${q}`], path);
    if (emulator === undefined) {
      throw new Error(`cannot run ${platformName(p)} programs on this ${platformName(host)} host: no qemu-${q}-static or qemu-${q} on PATH (on Debian: apt-get install qemu-user-static)`);
    }
  }
  return {
    platform: p,
    emulator,
    run: (file, args, o) =>
      new Promise((res) => {
        const [cmd, argv] = emulator === undefined ? [file, [...args]] : [emulator, [file, ...args]];
        execFile(cmd, argv, { cwd: o.cwd, env: o.env, timeout: o.timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
          if (err === null) return res({ code: 0, stdout, stderr, timedOut: false });
          const timedOut = err.killed === true && typeof err.code !== "number";
          res({ code: typeof err.code === "number" ? err.code : null, stdout, stderr: stderr === "" ? err.message : stderr, timedOut });
        });
      }),
  };
}
