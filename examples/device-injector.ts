/**
 * Device injector: gives containers the devices, CDI devices and mounts their pod's annotations
 * ask for. Annotation values are JSON; keys name the container:
 *
 *   devices.nri-wire.dev/container.<name>      [{"path":"/dev/null","type":"c","major":1,"minor":3,"fileMode":438}]
 *   cdi-devices.nri-wire.dev/container.<name>  ["vendor.com/class=name"]
 *   mounts.nri-wire.dev/container.<name>       [{"source":"/src","destination":"/dst","type":"bind","options":["ro"]}]
 */
import { AdjustmentBuilder, type LinuxDevice, type Loose, type Mount, NriPlugin, type PluginHandlers } from "nri-wire/plugin";
import { flags, isMain, main, pluginOptions, run } from "./run.js";

/** The annotation prefix this plugin reads. */
export const DOMAIN = "nri-wire.dev";

function annotation<T>(annotations: Record<string, string>, kind: string, container: string): T[] {
  const raw = annotations[`${kind}.${DOMAIN}/container.${container}`];
  if (raw === undefined) return [];
  const parsed: unknown = JSON.parse(raw);
  if (!Array.isArray(parsed)) throw new Error(`device-injector: ${kind}.${DOMAIN}/container.${container}: expected a JSON list`);
  return parsed as T[];
}

/** The device injector's handlers. */
export function deviceInjector(): PluginHandlers {
  return {
    createContainer: (req) => {
      const annotations = req.pod?.annotations ?? {};
      const name = req.container?.name ?? "";
      const adjust = new AdjustmentBuilder();
      for (const d of annotation<Loose<LinuxDevice>>(annotations, "devices", name)) adjust.addDevice(d);
      for (const c of annotation<string>(annotations, "cdi-devices", name)) adjust.addCDIDevice(c);
      for (const m of annotation<Loose<Mount>>(annotations, "mounts", name)) adjust.addMount(m);
      return { adjust: adjust.build() };
    },
  };
}

if (isMain(import.meta)) {
  main(async () => {
    const f = flags();
    await run(new NriPlugin(deviceInjector(), pluginOptions(f, "device-injector", "10")));
  });
}
