/**
 * Validator: checks the adjustments of every other plugin before the runtime applies them and
 * refuses containers that would get a device outside `--allow` (comma-separated device paths,
 * default /dev/null) or a mount of a host path outside `/var/lib/shared`. The refusal's text is
 * what the runtime reports for the container.
 */
import { NriPlugin, type PluginHandlers, markedForRemoval } from "nri-wire/plugin";
import { flags, isMain, main, pluginOptions, run } from "./run.js";

/** The validator's handlers. */
export function validator(allowedDevices: readonly string[]): PluginHandlers {
  return {
    validateContainerAdjustment: (req) => {
      for (const d of req.adjust?.linux?.devices ?? []) {
        if (markedForRemoval(d.path) !== undefined) continue;
        if (!allowedDevices.includes(d.path)) throw new Error(`validator: device ${d.path} is not allowed for container ${req.container?.name ?? ""}`);
      }
      for (const m of req.adjust?.mounts ?? []) {
        if (markedForRemoval(m.destination) !== undefined || m.type !== "bind") continue;
        if (!m.source.startsWith("/var/lib/shared/")) throw new Error(`validator: mount of host path ${m.source} is not allowed`);
      }
      return undefined;
    },
  };
}

if (isMain(import.meta)) {
  main(async () => {
    const f = flags(["allow"]);
    await run(new NriPlugin(validator((f.allow ?? "/dev/null").split(",")), pluginOptions(f, "validator", "90")));
  });
}
