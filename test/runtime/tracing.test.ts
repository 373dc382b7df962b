import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { NriPlugin, type PluginOptions } from "../../src/plugin/index.js";
import { EventError, NriRuntime } from "../../src/runtime/index.js";
import { expectRejection } from "../support/errors.js";
import { socketPath } from "../support/socket.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const pod = { id: "sb-1", name: "web", uid: "uid-1", namespace: "shop" };
const container = { id: "ctr-1", podSandboxId: "sb-1", name: "app" };

/** A runtime and a plugin on one socket, each with its own provider, spans in one exporter. */
async function tracedPair(pluginOptions: PluginOptions = {}): Promise<{ runtime: NriRuntime; spans: InMemorySpanExporter }> {
  const spans = new InMemorySpanExporter();
  const provider = () => new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  const path = socketPath();
  const runtime = new NriRuntime({ name: "rt", version: "1", socketPath: path, pluginPath: `${path}.none`, log: quiet, tracing: { tracerProvider: provider() } });
  await runtime.start();
  cleanup.push(() => runtime.stop());
  const plugin = new NriPlugin(
    { createContainer: (req) => (req.container?.name === "bad" ? Promise.reject(new Error("no room")) : { adjust: { annotations: { a: "1" } } }) },
    { idx: "10", name: "p", env: {}, socketPath: path, log: quiet, tracing: { tracerProvider: provider() }, ...pluginOptions },
  );
  cleanup.push(() => plugin.close());
  await plugin.start();
  await runtime.waitForPlugins(1);
  spans.reset();
  return { runtime, spans };
}

function byKind(spans: ReadableSpan[], kind: SpanKind): ReadableSpan {
  const found = spans.filter((s) => s.kind === kind);
  expect(found.length).toBe(1);
  return found[0]!;
}

describe("traces", () => {
  it("one trace per event: the runtime's event span, its call to the plugin, and the plugin's span, joined by traceparent", async () => {
    const { runtime, spans } = await tracedPair();
    await runtime.createContainer({ pod, container });
    const all = spans.getFinishedSpans();
    const event = byKind(all, SpanKind.INTERNAL);
    const client = byKind(all, SpanKind.CLIENT);
    const server = byKind(all, SpanKind.SERVER);
    expect([event.name, client.name, server.name]).toEqual(["nri CreateContainer", "nri.pkg.api.v1beta1.Plugin/CreateContainer", "nri.pkg.api.v1beta1.Plugin/CreateContainer"]);
    const trace = event.spanContext().traceId;
    expect([client.spanContext().traceId, server.spanContext().traceId]).toEqual([trace, trace]);
    expect(client.parentSpanContext?.spanId).toBe(event.spanContext().spanId);
    expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
    expect(server.parentSpanContext?.isRemote).toBe(true);
    const attributes = {
      "rpc.system": "ttrpc",
      "rpc.service": "nri.pkg.api.v1beta1.Plugin",
      "rpc.method": "CreateContainer",
      "nri.plugin": "10-p",
      "nri.revision": "v1beta1",
      "k8s.namespace.name": "shop",
      "k8s.pod.name": "web",
      "k8s.pod.uid": "uid-1",
      "nri.pod_sandbox.id": "sb-1",
      "container.id": "ctr-1",
      "k8s.container.name": "app",
    };
    expect(client.attributes).toEqual(attributes);
    expect(server.attributes).toEqual(attributes);
    expect(event.attributes).toEqual({ "nri.event": "CreateContainer", "k8s.namespace.name": "shop", "k8s.pod.name": "web", "k8s.pod.uid": "uid-1", "nri.pod_sandbox.id": "sb-1", "container.id": "ctr-1", "k8s.container.name": "app" });
  });

  it("mark the spans of a failed call and event as errors", async () => {
    const { runtime, spans } = await tracedPair();
    await expectRejection(EventError, runtime.createContainer({ pod, container: { ...container, name: "bad" } }));
    const all = spans.getFinishedSpans();
    expect(all.map((s) => [s.kind, s.status.code, s.status.message])).toEqual([
      [SpanKind.SERVER, SpanStatusCode.ERROR, "no room"],
      [SpanKind.CLIENT, SpanStatusCode.ERROR, "rpc error: code = Unknown desc = no room"],
      [SpanKind.INTERNAL, SpanStatusCode.ERROR, "rpc error: code = Unknown desc = no room"],
    ]);
  });

  it("join a plugin that speaks v1alpha1: traceparent crosses the translation", async () => {
    const { runtime, spans } = await tracedPair({ dialect: "v1alpha1" });
    await runtime.createContainer({ pod, container });
    const all = spans.getFinishedSpans();
    const client = byKind(all, SpanKind.CLIENT);
    const server = byKind(all, SpanKind.SERVER);
    expect(server.name).toBe("nri.pkg.api.v1alpha1.Plugin/CreateContainer");
    expect(server.attributes["nri.revision"]).toBe("v1alpha1");
    expect(client.attributes["nri.revision"]).toBe("v1alpha1");
    expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
  });
});
