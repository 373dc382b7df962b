/**
 * A runtime in a few lines: an NriRuntime on a private socket with one builtin plugin (the
 * device injector's handlers, run in this process) and one plugin process (the ulimit adjuster,
 * connecting to the socket), then a pod and a container whose annotations both plugins act on.
 * Prints the merged adjustment as JSON and exits 0.
 *
 *   npx tsx examples/runtime.ts
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NriRuntime } from "nri-wire/runtime";
import { ContainerAdjustmentSchema } from "nri-wire/v1beta1";
import { toJson } from "@bufbuild/protobuf";
import { deviceInjector } from "./device-injector.js";

const dir = mkdtempSync(join(tmpdir(), "nri-runtime-"));
const socketPath = join(dir, "nri.sock");
const runtime = new NriRuntime({
  name: "example-runtime",
  version: "0.1.0",
  socketPath,
  pluginPath: join(dir, "plugins"), // no pre-installed plugins
  builtinPlugins: [{ idx: "10", name: "device-injector", handlers: deviceInjector() }],
});
await runtime.start();

// The plugin process: run with the same Node flags as this one (tsx's loader, when run with tsx).
const pluginFile = join(import.meta.dirname, "ulimit-adjuster.ts");
const child = spawn(process.execPath, [...process.execArgv, pluginFile, "--socket", socketPath, "--idx", "20"], { stdio: ["ignore", "inherit", "pipe"] });
let childErr = "";
child.stderr.on("data", (b: Buffer) => (childErr += b.toString()));
const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));

try {
  await runtime.waitForPlugins(2, 20_000);
  console.log(`plugins: ${runtime.plugins.map((p) => `${p.id} (${p.kind})`).join(", ")}`);

  const pod = {
    id: "pod-1",
    name: "web",
    namespace: "default",
    annotations: {
      "devices.nri-wire.dev/container.app": JSON.stringify([{ path: "/dev/fuse", type: "c", major: 10, minor: 229, fileMode: 0o666 }]),
      "ulimits.nri-wire.dev/container.app": JSON.stringify([{ type: "nofile", hard: 65536, soft: 4096 }]),
    },
  };
  await runtime.runPodSandbox({ pod });
  const { adjust } = await runtime.createContainer({ pod, container: { id: "ctr-1", podSandboxId: "pod-1", name: "app" } });
  console.log(JSON.stringify(toJson(ContainerAdjustmentSchema, adjust!), null, 2));
} finally {
  await runtime.stop("example done");
  rmSync(dir, { recursive: true, force: true });
}
const code = await exited;
if (code !== 0) {
  process.stderr.write(`ulimit-adjuster exited with ${code}: ${childErr}`);
  process.exitCode = 1;
}
