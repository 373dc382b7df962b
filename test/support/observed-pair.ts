/**
 * Run by the optional-peer tests in a child process: a runtime and a plugin with Prometheus
 * metrics and traces asked for, one event, then every log line and the event's outcome on stdout.
 */
import { join } from "node:path";
import { NriPlugin } from "../../src/plugin/index.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { removeTempDirs, tempDir } from "./temp.js";

const lines: string[] = [];
const log = (who: string) => ({ info: () => undefined, warn: (m: string) => lines.push(`${who} warn: ${m}`), error: (m: string) => lines.push(`${who} error: ${m}`) });
const dir = tempDir();
const path = join(dir, "nri.sock");
const runtime = new NriRuntime({ name: "rt", version: "1", socketPath: path, pluginPath: join(dir, "none"), prometheus: true, tracing: true, log: log("runtime") });
await runtime.start();
const plugin = new NriPlugin({ createContainer: () => ({ adjust: { annotations: { seen: "yes" } } }) }, { idx: "10", name: "p", env: {}, socketPath: path, prometheus: true, tracing: true, log: log("plugin") });
await plugin.start();
await runtime.waitForPlugins(1);
const res = await runtime.createContainer({ pod: { id: "p" }, container: { id: "c", podSandboxId: "p" } });
lines.push(`event: ${JSON.stringify(res.adjust?.annotations)}`);
await runtime.stop();
// A child process: no test file's clean-up runs here.
removeTempDirs();
process.stdout.write(`${lines.join("\n")}\n`);
