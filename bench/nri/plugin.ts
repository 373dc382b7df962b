/**
 * The TypeScript plugin of the end-to-end bench: adds one annotation and one environment
 * variable on CreateContainer and acknowledges StartContainer and PostStartContainer, like the
 * Go bench plugin. `node plugin.js --socket PATH --idx NN --name NAME [--busy-poll MICROS]
 * [--warm-up] [--alloc] [--observe LIST]`; with --alloc each SIGUSR2 prints the bytes allocated since the previous one as a
 * JSON line. SIGINT exits normally, so that a --cpu-prof profile is written.
 */
import { NriPlugin } from "../../src/plugin/index.js";
import { AllocationMeter } from "./alloc.js";
import { busyPollOption, flag, warmUpOption } from "./args.js";
import { observing, passThrough } from "./observe.js";

const name = flag("name", "bench");
const observe = observing();
const envName = `BENCH_${name.toUpperCase().replaceAll("-", "_")}`;
const plugin = new NriPlugin(
  {
    createContainer: () => ({ adjust: { annotations: { [`bench.nri-wire.io/${name}`]: "1" }, env: [{ key: envName, value: "1" }] } }),
    startContainer: () => undefined,
    postStartContainer: () => undefined,
  },
  {
    name,
    idx: flag("idx", "10"),
    socketPath: flag("socket", ""),
    ...busyPollOption(),
    ...(observe.interceptors ? { interceptors: [passThrough] } : {}),
    ...(observe.metrics ? { prometheus: true } : {}),
    ...(observe.traces ? { tracing: true } : {}),
    ...warmUpOption(),
  },
);
if (process.argv.includes("--alloc")) {
  const meter = new AllocationMeter();
  meter.start();
  process.on("SIGUSR2", () => {
    console.log(JSON.stringify(meter.read()));
    meter.start();
  });
}
process.on("SIGINT", () => process.exit(0));
await plugin.start();
await plugin.closed;
