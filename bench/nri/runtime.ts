/**
 * The TypeScript runtime of the end-to-end bench, the twin of `nri-bench runtime` (Go): waits for
 * N plugins, checks with one CreateContainer that every plugin answers, then runs the phases
 * (phases.ts) of CreateContainer + StartContainer + PostStartContainer cycles on the fixture
 * request. `node runtime.js --socket PATH --plugins N --request FILE --phases LIST
 * [--busy-poll MICROS] [--warm-up] [--alloc] [--observe LIST]`, or `--serve` to only report each synchronized plugin
 * (cold-start measurements).
 */
import { readFileSync } from "node:fs";
// The request is decoded by the generated codec the runtime already holds: a runtime loads no
// protoc-gen-es module, and neither does its bench twin.
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { AllocationMeter } from "./alloc.js";
import { busyPollOption, flag, warmUpOption } from "./args.js";
import { mark, parsePhases, runPhases } from "./phases.js";
import { observing, passThrough } from "./observe.js";

const serveOnly = process.argv.includes("--serve");
const observe = observing();
let syncCalls = 0;
const runtime = new NriRuntime({
  socketPath: flag("socket", ""),
  pluginPath: "/nonexistent/nri-bench/plugins",
  name: "nri-bench",
  version: "v1",
  requestTimeoutMs: 10_000,
  ...busyPollOption(),
  ...(observe.interceptors ? { interceptors: [passThrough] } : {}),
  ...(observe.metrics ? { prometheus: true } : {}),
  ...(observe.traces ? { tracing: true } : {}),
  ...warmUpOption(),
  synchronize: async (sync) => {
    await sync([], []);
    // The first call synchronizes the (no) pre-installed plugins at start.
    if (syncCalls++ > 0) console.log("synced");
  },
});
await runtime.start();
console.log("ready");
if (!serveOnly) {
  const plugins = Number(flag("plugins", "1"));
  await runtime.waitForPlugins(plugins);
  // Every plugin registered and no event yet: the driver reads their idle memory.
  await mark("synced");
  const raw = new Uint8Array(readFileSync(flag("request", "")));
  const base = v1beta1.CreateContainerRequest.decode(raw);
  const pod = base.pod;
  const container = base.container;
  // The runtime copies the request before adjusting it (Go's adapts the one it is given, so its
  // twin passes a proto.Clone): `base` itself is never changed.
  const first = await runtime.createContainer(base);
  console.log(JSON.stringify({ annotations: Object.keys(first.adjust?.annotations ?? {}).length, request_bytes: raw.length }));
  const cycle = async (): Promise<void> => {
    await runtime.createContainer(base);
    await runtime.startContainer({ pod, container });
    await runtime.postStartContainer({ pod, container });
  };
  // The bench kills the process after the last mark. SIGINT exits normally, so that a
  // --cpu-prof profile is written.
  process.on("SIGINT", () => process.exit(0));
  await runPhases(parsePhases(flag("phases", "steady:5")), cycle, process.argv.includes("--alloc") ? new AllocationMeter() : undefined);
}
