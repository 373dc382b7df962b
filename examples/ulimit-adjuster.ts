/**
 * Ulimit adjuster: sets POSIX rlimits from the pod annotation
 * `ulimits.nri-wire.dev/container.<name>`: a JSON list of {"type":"nofile","hard":N,"soft":N}.
 * Types may be written `nofile` or `RLIMIT_NOFILE`; an unknown type or soft above hard fails the
 * container's creation with a message saying which.
 */
import { AdjustmentBuilder, NriPlugin, type PluginHandlers } from "nri-wire/plugin";
import { flags, isMain, main, pluginOptions, run } from "./run.js";

const TYPES = ["AS", "CORE", "CPU", "DATA", "FSIZE", "LOCKS", "MEMLOCK", "MSGQUEUE", "NICE", "NOFILE", "NPROC", "RSS", "RTPRIO", "RTTIME", "SIGPENDING", "STACK"];

interface Ulimit {
  type: string;
  hard: number;
  soft: number;
}

/** `nofile` or `RLIMIT_NOFILE` as `RLIMIT_NOFILE`; throws for an unknown type. */
export function rlimitType(type: string): string {
  const bare = type.toUpperCase().replace(/^RLIMIT_/u, "");
  if (!TYPES.includes(bare)) throw new Error(`ulimit-adjuster: unknown rlimit type "${type}"`);
  return `RLIMIT_${bare}`;
}

/** The ulimit adjuster's handlers. */
export function ulimitAdjuster(): PluginHandlers {
  return {
    createContainer: (req) => {
      const name = req.container?.name ?? "";
      const raw = req.pod?.annotations[`ulimits.nri-wire.dev/container.${name}`];
      if (raw === undefined) return undefined;
      const adjust = new AdjustmentBuilder();
      for (const u of JSON.parse(raw) as Ulimit[]) {
        if (u.soft > u.hard) throw new Error(`ulimit-adjuster: ${u.type}: soft limit ${u.soft} above hard limit ${u.hard}`);
        adjust.addRlimit(rlimitType(u.type), u.hard, u.soft); // numbers: range-checked as uint64
      }
      return { adjust: adjust.build() };
    },
  };
}

if (isMain(import.meta)) {
  main(async () => {
    const f = flags();
    await run(new NriPlugin(ulimitAdjuster(), pluginOptions(f, "ulimit-adjuster", "20")));
  });
}
