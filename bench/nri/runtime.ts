/**
 * The TypeScript runtime of the end-to-end bench, the twin of `nri-bench runtime` (Go): waits for
 * N plugins, then runs CreateContainer + StartContainer + PostStartContainer cycles with the
 * fixture request for the given seconds and prints one JSON line of figures.
 * `node runtime.js --socket PATH --plugins N --request FILE --seconds S [--busy-poll MICROS]`, or
 * `--serve` to only report each synchronized plugin (cold-start measurements).
 */
import { readFileSync } from "node:fs";
import { fromBinary, toBinary } from "../../src/runtime/messages.js";
import { type CreateContainerResponse, CreateContainerRequestSchema, CreateContainerResponseSchema } from "../../gen/v1beta1/api_pb.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { busyPollOption, flag } from "./args.js";
import { type CycleFigures, measureCycles } from "./cycles.js";

const serveOnly = process.argv.includes("--serve");
let syncCalls = 0;
const runtime = new NriRuntime({
  socketPath: flag("socket", ""),
  pluginPath: "/nonexistent/nri-bench/plugins",
  name: "nri-bench",
  version: "v1",
  requestTimeoutMs: 10_000,
  ...busyPollOption(),
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
  const raw = new Uint8Array(readFileSync(flag("request", "")));
  const base = fromBinary(CreateContainerRequestSchema, raw);
  const pod = base.pod;
  const container = base.container;
  let annotations = 0;
  let last: CreateContainerResponse | undefined;
  const cycle = async (): Promise<void> => {
    // The runtime copies the request before adjusting it (Go's adapts the one it is given, so
    // its twin passes a proto.Clone): \`base\` itself is never changed.
    const created = await runtime.createContainer(base);
    annotations = Object.keys(created.adjust?.annotations ?? {}).length;
    last = created;
    await runtime.startContainer({ pod, container });
    await runtime.postStartContainer({ pod, container });
  };
  const figures: CycleFigures = await measureCycles(cycle, Number(flag("seconds", "5")));
  const responseBytes = last === undefined ? 0 : toBinary(CreateContainerResponseSchema, last).length;
  console.log(JSON.stringify({ ...figures, annotations, request_bytes: raw.length, response_bytes: responseBytes }));
  // Stays up so that the peak RSS can be read; the bench kills the process. SIGINT exits
  // normally, so that a --cpu-prof profile is written.
  process.on("SIGINT", () => process.exit(0));
}
