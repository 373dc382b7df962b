/**
 * The bench plugin as an entry of `nri-wire build`: the same handlers as plugin.ts (one
 * annotation and one environment variable on CreateContainer, named after the plugin so that
 * several run side by side; StartContainer and PostStartContainer acknowledged), exported for
 * the built executable to run. Its top-level code runs in each process and reads the name the
 * process was given (`--name`).
 */
import type { PluginHandlers } from "../../src/plugin/index.js";
import { flag } from "./args.js";

const name = flag("name", "bench");
const envName = `BENCH_${name.toUpperCase().replaceAll("-", "_")}`;

export default {
  createContainer: () => ({ adjust: { annotations: { [`bench.nri-wire.io/${name}`]: "1" }, env: [{ key: envName, value: "1" }] } }),
  startContainer: () => undefined,
  postStartContainer: () => undefined,
} satisfies PluginHandlers;
