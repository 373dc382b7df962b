/**
 * The bench plugin as an entry of `nri-wire build`: the same handlers as plugin.ts (one
 * annotation and one environment variable on CreateContainer, StartContainer and
 * PostStartContainer acknowledged), exported for the built executable to run.
 */
import type { PluginHandlers } from "../../src/nri/plugin.js";

export default {
  createContainer: () => ({ adjust: { annotations: { "bench.nri-wire.io/built": "1" }, env: [{ key: "BENCH_BUILT", value: "1" }] } }),
  startContainer: () => undefined,
  postStartContainer: () => undefined,
} satisfies PluginHandlers;
