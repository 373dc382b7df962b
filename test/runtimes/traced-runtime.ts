/**
 * An nri-wire runtime that sends its traces to an OTLP/HTTP collector (Jaeger in the operations
 * suite), run as its own process:
 *
 *   node --import tsx test/runtimes/traced-runtime.ts --socket PATH --endpoint URL
 *
 * It prints `ready` once listening, waits for one plugin, runs one pod's lifecycle through it,
 * and once its spans are sent prints `{"done":true,...}` with the merged annotations.
 */
import { parseArgs } from "node:util";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { NriRuntime } from "../../src/runtime/index.js";

const { values } = parseArgs({ options: { socket: { type: "string" }, endpoint: { type: "string" } }, strict: true });
const provider = new TracerProvider({
  resource: resourceFromAttributes({ "service.name": "nri-runtime" }),
  spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${values.endpoint!}/v1/traces` }) })],
});
const runtime = new NriRuntime({ name: "traced-runtime", version: "1", socketPath: values.socket!, pluginPath: "/nonexistent", tracing: { tracerProvider: provider } });
await runtime.start();
console.log("ready");
await runtime.waitForPlugins(1, 60_000);
const pod = { id: "sb-traced", name: "traced", uid: "uid-traced", namespace: "operations" };
const container = { id: "ctr-traced", podSandboxId: pod.id, name: "app" };
await runtime.runPodSandbox({ pod });
const created = await runtime.createContainer({ pod, container });
await runtime.startContainer({ pod, container });
await runtime.stopContainer({ pod, container });
await runtime.removeContainer({ pod, container });
await runtime.stopPodSandbox({ pod });
await runtime.removePodSandbox({ pod });
await runtime.stop();
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ done: true, annotations: created.adjust?.annotations ?? {} }));
