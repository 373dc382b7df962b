import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/socket.js";
import { go, linux, prerequisites } from "../support/prerequisites.js";
import { containerd } from "./containerd.js";
import type { RunningRuntime } from "./runtime.js";
import { type Built, build, logDir, NRI_WIRE, readText, removeWorkDir, ROOT, run, runForExit, RUNTIME_NEEDS, type Started, startLogged, stop, waitUntil, workDir } from "./support.js";

/**
 * What operators see of a plugin built by `nri-wire build`, with real parts: a real Prometheus
 * (v0.316.0, built from the Go module proxy) scrapes the plugin's /metrics while it runs under a
 * real containerd (v2.4.2) and sees every event of a pod's lifecycle, and `promtool check metrics`
 * finds nothing to say about the text; a real Jaeger all-in-one (v1.76.0) receives one trace that
 * spans an nri-wire runtime and the plugin. Runs as root on Linux with Go (like runtimes.test.ts;
 * the chart checks need only Go on Linux); elsewhere it prints a notice and skips (under CI=true
 * it fails).
 */

const gate = prerequisites("operations", "the operations suite with a real Prometheus, Jaeger and containerd", RUNTIME_NEEDS);
// The chart checks run no runtime: Go builds helm, Linux runs the built executable.
const chartGate = prerequisites("operations", "the chart's metrics, tracing and log values", [linux, go("it builds helm and the decoder")]);

const PLUGIN = { name: "observed", idx: "10", entry: join(ROOT, "test/runtimes/fixtures/observed.ts") } as const;
const ID = `${PLUGIN.idx}-${PLUGIN.name}`;
const OUT = join(ROOT, "test/runtimes/.bin/operations");
/** The events of one pod with one container under containerd, as the plugin's metrics name them. */
const LIFECYCLE = ["RunPodSandbox", "CreateContainer", "PostCreateContainer", "StartContainer", "PostStartContainer", "StopContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox"];


/** Polls an asynchronous condition every 500 ms until it holds. */
async function eventually<T>(get: () => Promise<T | undefined>, what: string, timeoutMs: number, detail: () => string = () => ""): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`operations: ${what} (waited ${timeoutMs} ms)${detail()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return res.json();
}

describe.skipIf(!gate.ok)("operations with real parts", () => {
  const built: Built = {};
  const runtime = containerd(built);
  let dir = "";
  let logs = "";
  let rt: RunningRuntime | undefined;
  let executable = "";
  const started: Started[] = [];

  beforeAll(async () => {
    Object.assign(built, await build(["containerd", "node", "prometheus", "jaeger"]));
    const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "build", PLUGIN.entry, "--name", PLUGIN.name, "--idx", PLUGIN.idx, "--out", OUT, "--node", built.NODE!], 600_000);
    if (r.code !== 0) throw new Error(`operations: nri-wire build failed (${r.code}): ${r.stderr}`);
    executable = join(OUT, ID);
    dir = workDir("ops");
    logs = logDir(built, "operations");
    rt = await runtime.start({ dir, logs }, 1);
  }, 1_800_000);

  afterAll(async () => {
    for (const p of started.reverse()) await stop(p);
    if (rt !== undefined) {
      const crictl = join(dir, "crictl.yaml");
      await runForExit(built.CRICTL!, ["--config", crictl, "rmp", "--force", "--all"]).catch(() => undefined);
      await rt.stop();
    }
    if (dir !== "") {
      const leaks = await removeWorkDir(dir);
      if (leaks.length > 0) throw new Error(`operations: left behind: ${leaks.join("; ")}`);
    }
  }, 180_000);

  it("Prometheus scrapes the plugin under containerd and sees every event of a pod's lifecycle; promtool finds the metrics clean", async () => {
    const metricsPort = await freePort();
    const plugin = startLogged(executable, ["--socket", rt!.nriSocket, "--metrics-port", String(metricsPort), "--metrics-address", "127.0.0.1"], join(logs, "observed.log"));
    started.push(plugin);
    await waitUntil(() => readText(plugin.log).includes("registered with containerd"), "the plugin to register with containerd", 60_000, () => `; log: ${plugin.log}`);

    const promPort = await freePort();
    const promDir = join(dir, "prometheus");
    mkdirSync(promDir, { recursive: true });
    writeFileSync(
      join(promDir, "prometheus.yml"),
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: nri-plugin\n    static_configs:\n      - targets: ["127.0.0.1:${metricsPort}"]\n        labels:\n          node: test\n`,
    );
    const prometheus = startLogged(
      built.PROMETHEUS!,
      ["--config.file", join(promDir, "prometheus.yml"), "--storage.tsdb.path", join(promDir, "data"), "--web.listen-address", `127.0.0.1:${promPort}`],
      join(logs, "prometheus.log"),
    );
    started.push(prometheus);
    const api = `http://127.0.0.1:${promPort}/api/v1`;
    await eventually(async () => ((await getJson(`${api}/targets`)) as { data: { activeTargets: { health: string }[] } }).data.activeTargets.find((t) => t.health === "up"), "Prometheus to scrape the plugin", 60_000, () => `; log: ${prometheus.log}`);

    // One pod and its container through CRI, start to end.
    const crictl = join(dir, "crictl.yaml");
    writeFileSync(crictl, `runtime-endpoint: ${rt!.endpoint}\nimage-endpoint: ${rt!.endpoint}\ntimeout: 60\n`);
    const cri = (...args: string[]) => run(built.CRICTL!, ["--config", crictl, ...args], `crictl ${args[0]!}`, rt!.log, 90_000).then((s) => s.trim());
    const ns = { namespace_options: { network: 2, pid: 1, ipc: 0 } };
    writeFileSync(join(dir, "pod.json"), JSON.stringify({ metadata: { name: "observed", namespace: "operations", uid: "observed-uid", attempt: 0 }, log_directory: join(dir, "pod-logs"), linux: { security_context: ns } }));
    writeFileSync(join(dir, "ctr.json"), JSON.stringify({ metadata: { name: "probe" }, image: { image: built.IMAGE! }, command: ["/probe", "pause"], log_path: "probe.log", linux: { security_context: ns } }));
    const pod = await cri("runp", join(dir, "pod.json"));
    const ctr = await cri("create", pod, join(dir, "ctr.json"), join(dir, "pod.json"));
    await cri("start", ctr);
    const inspect = JSON.parse(await cri("inspect", ctr)) as { info?: { runtimeSpec?: { annotations?: Record<string, string> } } };
    expect(inspect.info?.runtimeSpec?.annotations?.["nri-wire/observed"]).toBe("yes");
    await cri("stop", ctr);
    await cri("rm", ctr);
    await cri("stopp", pod);
    await cri("rmp", pod);

    // What Prometheus stored: every event of the lifecycle, once each, all answered.
    const byMethod = await eventually(
      async () => {
        const q = encodeURIComponent(`sum by (method) (nri_plugin_events_total{job="nri-plugin",outcome="success",plugin="${ID}"})`);
        const r = (await getJson(`${api}/query?query=${q}`)) as { data: { result: { metric: { method: string }; value: [number, string] }[] } };
        const seen = Object.fromEntries(r.data.result.map((s) => [s.metric.method, Number(s.value[1])]));
        return LIFECYCLE.every((m) => (seen[m] ?? 0) >= 1) ? seen : undefined;
      },
      "Prometheus to see every event of the pod's lifecycle",
      60_000,
    );
    for (const m of LIFECYCLE) expect(byMethod[m], m).toBe(1);
    const connected = (await getJson(`${api}/query?query=${encodeURIComponent(`nri_plugin_connected{plugin="${ID}"}`)}`)) as { data: { result: { value: [number, string] }[] } };
    expect(connected.data.result.map((r) => r.value[1])).toEqual(["1"]);
    const info = (await getJson(`${api}/query?query=${encodeURIComponent("nri_plugin_runtime_info")}`)) as { data: { result: { metric: Record<string, string> }[] } };
    expect(info.data.result.map((r) => [r.metric.runtime, r.metric.revision])).toEqual([["containerd", "v1alpha1"]]);

    // The text itself, as promtool lints it.
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    // Kept with the logs: docs/operations.md quotes a scrape.
    writeFileSync(join(logs, "observed-metrics.txt"), text);
    const lint = spawnSync(built.PROMTOOL!, ["check", "metrics"], { input: text, encoding: "utf8" });
    expect([lint.status, lint.stdout, lint.stderr]).toEqual([0, "", ""]);
    await stop(plugin);
  }, 300_000);

  it("Jaeger all-in-one receives one trace spanning an nri-wire runtime and the plugin", async () => {
    const jaegerDir = join(dir, "jaeger");
    mkdirSync(jaegerDir, { recursive: true });
    const [otlpHttp, otlpGrpc, query, queryGrpc, admin, collectorHttp, collectorGrpc] = await Promise.all(Array.from({ length: 7 }, () => freePort()));
    const jaeger = startLogged(
      built.JAEGER!,
      [
        `--collector.otlp.http.host-port=127.0.0.1:${otlpHttp}`,
        `--collector.otlp.grpc.host-port=127.0.0.1:${otlpGrpc}`,
        `--query.http-server.host-port=127.0.0.1:${query}`,
        `--query.grpc-server.host-port=127.0.0.1:${queryGrpc}`,
        `--admin.http.host-port=127.0.0.1:${admin}`,
        `--collector.http-server.host-port=127.0.0.1:${collectorHttp}`,
        `--collector.grpc-server.host-port=127.0.0.1:${collectorGrpc}`,
      ],
      join(logs, "jaeger.log"),
      { ...process.env, SPAN_STORAGE_TYPE: "memory", COLLECTOR_OTLP_ENABLED: "true" },
    );
    started.push(jaeger);
    await eventually(async () => ((await fetch(`http://127.0.0.1:${query}/api/services`)).ok ? true : undefined), "Jaeger to answer", 60_000, () => `; log: ${jaeger.log}`);

    const endpoint = `http://127.0.0.1:${otlpHttp}`;
    const socket = join(dir, "traced", "nri.sock");
    mkdirSync(join(dir, "traced"), { recursive: true });
    const traced = startLogged(process.execPath, ["--import", "tsx", join(ROOT, "test/runtimes/traced-runtime.ts"), "--socket", socket, "--endpoint", endpoint], join(logs, "traced-runtime.log"));
    started.push(traced);
    await waitUntil(() => readText(traced.log).includes("ready"), "the traced runtime to listen", 60_000, () => `; log: ${traced.log}`);
    const plugin = startLogged(executable, ["--socket", socket, "--trace-endpoint", endpoint, "--trace-sampling", "1"], join(logs, "observed-traced.log"));
    started.push(plugin);
    await waitUntil(() => readText(traced.log).includes('"done":true'), "the traced runtime to run its events", 120_000, () => `; log: ${traced.log}, ${plugin.log}`);
    expect(JSON.parse(readText(traced.log).split("\n").find((l) => l.startsWith('{"done"'))!)).toEqual({ done: true, annotations: { "nri-wire/observed": "yes" } });
    // The plugin sends what it holds as it stops.
    await stop(plugin);
    expect(readText(plugin.log)).not.toContain("traces:");

    interface JaegerSpan {
      traceID: string;
      spanID: string;
      operationName: string;
      processID: string;
      references: { refType: string; spanID: string }[];
      tags: { key: string; value: unknown }[];
    }
    interface JaegerTrace {
      traceID: string;
      spans: JaegerSpan[];
      processes: Record<string, { serviceName: string }>;
    }
    const api = `http://127.0.0.1:${query}/api`;
    const found = await eventually(
      async () => {
        const r = (await getJson(`${api}/traces?service=nri-runtime&operation=${encodeURIComponent("nri CreateContainer")}&limit=5`)) as { data: JaegerTrace[] };
        const t = r.data.find((x) => new Set(x.spans.map((s) => x.processes[s.processID]?.serviceName)).size === 2);
        return t;
      },
      "Jaeger to hold the CreateContainer trace with the runtime's and the plugin's spans",
      60_000,
      () => `; log: ${jaeger.log}`,
    );
    const service = (s: JaegerSpan) => found.processes[s.processID]!.serviceName;
    const spans = found.spans.map((s) => `${service(s)} ${s.operationName}`).sort();
    expect(spans).toEqual([`nri-plugin-${ID} nri.pkg.api.v1beta1.Plugin/CreateContainer`, "nri-runtime nri CreateContainer", "nri-runtime nri.pkg.api.v1beta1.Plugin/CreateContainer"]);
    const event = found.spans.find((s) => s.operationName === "nri CreateContainer")!;
    const client = found.spans.find((s) => service(s) === "nri-runtime" && s.operationName !== "nri CreateContainer")!;
    const server = found.spans.find((s) => service(s) !== "nri-runtime")!;
    expect(client.references).toEqual([expect.objectContaining({ refType: "CHILD_OF", spanID: event.spanID })]);
    expect(server.references).toEqual([expect.objectContaining({ refType: "CHILD_OF", spanID: client.spanID })]);
    const tags = Object.fromEntries(server.tags.map((t) => [t.key, t.value]));
    expect(tags).toMatchObject({ "k8s.pod.name": "traced", "k8s.namespace.name": "operations", "container.id": "ctr-traced", "nri.plugin": ID, "nri.revision": "v1beta1", "span.kind": "server" });
    await stop(traced);
  }, 300_000);
});

describe.skipIf(!chartGate.ok)("the chart's metrics, tracing and log values", () => {
  let helm = "";
  let decoder = "";
  const chart = join(OUT, "chart");
  beforeAll(async () => {
    const b = await build(["helm", "node"]);
    helm = b.HELM!;
    decoder = join(ROOT, "test/runtimes/.bin/k8s-decode");
    await run("go", ["-C", join(ROOT, "test/ship/k8s-decode"), "build", "-o", decoder, "."], "go build k8s-decode", join(ROOT, "test/ship/k8s-decode"), 600_000);
    const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "build", PLUGIN.entry, "--name", PLUGIN.name, "--idx", PLUGIN.idx, "--out", OUT, "--node", b.NODE!], 600_000);
    if (r.code !== 0) throw new Error(`operations: nri-wire build failed (${r.code}): ${r.stderr}`);
  }, 1_800_000);

  const template = (...set: string[]): Promise<string> => run(helm, ["template", "ops", chart, "--namespace", "kube-system", ...set.flatMap((s) => ["--set", s])], "helm template", chart);

  it("by default: no port, no annotation, no Service; text logs; the objects decode strictly", async () => {
    const lint = await runForExit(helm, ["lint", chart, "--set", "metrics.enabled=true", "--set", "metrics.serviceMonitor.enabled=true"]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    const text = await template();
    expect(text).not.toContain("prometheus.io/scrape");
    expect(text).not.toContain("NRI_WIRE_METRICS_PORT");
    expect(text).not.toContain("kind: Service");
    expect(text).toContain('- name: NRI_WIRE_LOG_FORMAT\n              value: "text"');
  }, 120_000);

  it("metrics.enabled: the port in the environment and as a hostPort, the scrape annotations; tracing and log values: their variables", async () => {
    const text = await template("metrics.enabled=true", "tracing.endpoint=http://otel-collector:4318", "tracing.samplingRate=0.25", "log.format=json", "log.level=info");
    const rendered = join(OUT, "rendered-operations.yaml");
    writeFileSync(rendered, text);
    const decoded = await runForExit(decoder, [rendered]);
    expect([decoded.code, decoded.stderr, decoded.stdout.trim().split("\n")]).toEqual([0, "", ["ConfigMap kube-system/ops-nri-plugin-observed-config", "DaemonSet kube-system/ops-nri-plugin-observed"]]);
    expect(text).toContain('prometheus.io/scrape: "true"\n        prometheus.io/port: "9410"\n        prometheus.io/path: /metrics');
    expect(text).toContain("- name: metrics\n              containerPort: 9410\n              hostPort: 9410\n              protocol: TCP");
    for (const [k, v] of [["NRI_WIRE_METRICS_PORT", "9410"], ["OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-collector:4318"], ["OTEL_TRACES_SAMPLER_ARG", "0.25"], ["NRI_WIRE_LOG_FORMAT", "json"], ["NRI_WIRE_LOG_LEVEL", "info"]]) {
      expect(text).toContain(`- name: ${k}\n              value: "${v}"`);
    }
  }, 120_000);

  it("metrics.serviceMonitor.enabled: a headless Service that decodes strictly, and a ServiceMonitor of its port", async () => {
    const text = await template("metrics.enabled=true", "metrics.port=9555", "metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom");
    const docs = text.split(/^---$/mu);
    const service = docs.find((d) => d.includes("kind: Service\n"))!;
    const file = join(OUT, "rendered-service.yaml");
    writeFileSync(file, service);
    const decoded = await runForExit(decoder, [file]);
    expect([decoded.code, decoded.stderr, decoded.stdout.trim()]).toEqual([0, "", "Service kube-system/ops-nri-plugin-observed-metrics"]);
    expect(service).toContain("clusterIP: None");
    const monitor = docs.find((d) => d.includes("kind: ServiceMonitor"))!;
    expect(monitor).toContain("apiVersion: monitoring.coreos.com/v1");
    expect(monitor).toContain("release: prom");
    expect(monitor).toContain("- port: metrics\n      path: /metrics\n      interval: 30s");
  }, 120_000);
});
