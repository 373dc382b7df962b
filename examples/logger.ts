/**
 * Logger: subscribes to every event (or those of `--events a,b,c`) and prints one JSON line per
 * event with the pod and container it concerns. A plugin that only watches answers nothing.
 */
import { parseEventMask, maskToEvents, formatEvent } from "nri-wire";
import { NriPlugin, type PluginHandlers } from "nri-wire/plugin";
import { flags, isMain, main, pluginOptions, run } from "./run.js";

/** Handlers that log the given events (default: all) through `print`. */
export function logger(events = "all", print: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): PluginHandlers {
  const handlers: Record<string, (req: { pod?: { name: string } | undefined; container?: { name: string } | undefined }) => undefined> = {};
  for (const event of maskToEvents(parseEventMask(events))) {
    const method = formatEvent(event);
    handlers[method.charAt(0).toLowerCase() + method.slice(1)] = (req) => {
      print(JSON.stringify({ event: method, pod: req.pod?.name ?? "", container: req.container?.name ?? "" }));
      return undefined;
    };
  }
  return {
    ...(handlers as PluginHandlers),
    synchronize: (req) => {
      print(JSON.stringify({ event: "Synchronize", pods: req.pods.map((p) => p.name), containers: req.containers.map((c) => c.name) }));
    },
  };
}

if (isMain(import.meta)) {
  main(async () => {
    const f = flags(["events"]);
    await run(new NriPlugin(logger(f.events), pluginOptions(f, "logger", "00")));
  });
}
