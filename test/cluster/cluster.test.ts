import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { confinement } from "../runtimes/confinement.js";
import { type Built, build, logDir, readText, ROOT, waitUntil, workDir } from "../runtimes/support.js";
import { command, go, linux, prerequisites, root } from "../support/prerequisites.js";
import { Cluster, conditionTrue, NODE } from "./cluster.js";
import type { KubeObject } from "./kube-api.js";
import { cgroupV2 } from "./host-state.js";
import { type DeployedPlugin, goPlugin, type PluginConfig, tsPlugin } from "./plugins.js";
import { containerPid, deleteTestPod, inside, nriConnections, podMemory, podReady, pluginPods, readyAfterRegistration, restarts, runTestPod, runtimeAnnotations } from "./workload.js";

/**
 * A plugin's real deployment path on a single-node Kubernetes cluster: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler and a kubelet on the project's containerd (NRI
 * enabled), built by scripts/cluster/build.sh and started for this run in a private directory.
 * Each plugin is installed with its Helm chart, must register (its DaemonSet pod ready) under the
 * chart's hardening (seccomp, no token, no capability, as the running process shows), adjust a
 * pod created afterwards (seen from the API, from inside the pod and from the runtime), roll on
 * `helm upgrade` with a new config, be healed by its DaemonSet, survive a runtime restart with no
 * container restart and within its chart's memory request, and adjust nothing once the
 * documented `helm uninstall` returns. The plugins' pod start latency, memory, restarts and time
 * from registration to Ready are printed side by side. Runs as root on Linux with Go and openssl
 * (`npm run test:cluster`); elsewhere it prints a notice and skips (under CI=true it fails).
 */

const gate = prerequisites("cluster", "the single-node Kubernetes suite", [linux, root, go("it builds the cluster"), command("openssl", "it makes the cluster's certificates")]);

/** Test pods created per measurement: the latency printed is their median. */
const LATENCY_RUNS = 7;

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

interface Figures {
  startMs: number;
  /** The same with no plugin, measured after its uninstall. */
  baselineMs: number;
  memory: { workingSetBytes: number; rssBytes: number };
  restarts: number;
  /** From the plugin's registration line to its pod's Ready condition (which has whole seconds). */
  readyAfterRegistration: { readonly fromMs: number; readonly toMs: number };
}

describe.skipIf(!gate.ok)("a plugin on a single-node cluster", () => {
  let built: Built;
  let cluster: Cluster;
  let dir: string;
  let logs: string;
  let podSeq = 0;
  const figures = new Map<string, Figures>();

  beforeAll(async () => {
    built = await build([], join(ROOT, "scripts/cluster/build.sh"));
    dir = workDir("cluster");
    logs = logDir(built, "cluster");
    console.log(`cluster: logs in ${logs}; cgroup ${cgroupV2() ? "v2" : "v1"}`);
    cluster = await Cluster.start(built, { dir, logs }, !cgroupV2());
  }, 60 * 60_000);

  afterAll(async () => {
    if (cluster === undefined) return;
    const left = await cluster.stop();
    expect(left).toEqual([]);
  }, 180_000);

  const nextPod = () => `probe-${++podSeq}`;

  it("registers the node Ready and runs a host-network pod", async () => {
    const node = await cluster.api.get(`/api/v1/nodes/${NODE}`);
    expect((node.status?.nodeInfo as { containerRuntimeVersion: string }).containerRuntimeVersion).toMatch(/^containerd:\/\/2\.4\.2/u);
    const pod = nextPod();
    await runTestPod(cluster, pod, built.IMAGE!);
    // No plugin: nothing of theirs inside.
    const seen = await inside(cluster, pod);
    expect(seen.env.NRI_WIRE_ADJUSTED).toBeUndefined();
    expect(seen.pidsMax).toBe("max");
    await deleteTestPod(cluster, pod);
    expect(nriConnections(cluster)).toBe(0);
  });

  const plugins: { language: string; make: () => Promise<DeployedPlugin> }[] = [
    { language: "Go", make: () => goPlugin(built) },
    { language: "TypeScript", make: () => tsPlugin(built) },
  ];

  describe.each(plugins)("the $language plugin", ({ language, make }) => {
    let plugin: DeployedPlugin;
    const config = (gen: number): PluginConfig => ({
      env: { NRI_WIRE_ADJUSTED: `${plugin.release}-${gen}` },
      annotations: { "nri-wire.dev/adjusted-by": `${plugin.release}-${gen}` },
      pidsLimit: 500 + gen,
    });
    /** The config of generation `gen` in a file, for `--set-file config=FILE`. */
    const configFile = (gen: number) => {
      const file = join(dir, `${plugin.release}-config-${gen}.json`);
      writeFileSync(file, JSON.stringify(config(gen)));
      return file;
    };

    /** The release's one plugin pod once it is ready and registered (one connection on the NRI socket). */
    const readyPluginPod = async (not?: string) => {
      const pod = await cluster.api.waitFor(
        `/api/v1/namespaces/${plugin.namespace}/pods`,
        `labelSelector=app.kubernetes.io/instance=${plugin.release}`,
        (p) => podReady(p) && p.metadata.uid !== not && p.metadata.deletionTimestamp === undefined,
        `the ${plugin.release} pod did not become ready`,
        180_000,
      );
      await waitUntil(() => nriConnections(cluster) === 1, `${plugin.release} did not connect to the NRI socket`, 60_000, () => `; connections: ${nriConnections(cluster)}`);
      return pod;
    };

    /** Creates a test pod and checks it carries config `gen`'s adjustments: inside, and in the runtime. */
    const expectAdjusted = async (gen: number): Promise<number> => {
      const pod = nextPod();
      const ms = await runTestPod(cluster, pod, built.IMAGE!);
      const want = config(gen);
      const seen = await inside(cluster, pod);
      expect(seen.env.NRI_WIRE_ADJUSTED).toBe(want.env.NRI_WIRE_ADJUSTED);
      expect(seen.pidsMax).toBe(String(want.pidsLimit));
      expect((await runtimeAnnotations(cluster, pod))["nri-wire.dev/adjusted-by"]).toBe(want.annotations["nri-wire.dev/adjusted-by"]);
      await deleteTestPod(cluster, pod);
      return ms;
    };

    beforeAll(async () => {
      plugin = await make();
      await cluster.importImage(plugin.imageTar);
      if (plugin.pinned !== undefined) await cluster.ctr("images", "tag", plugin.pinned.tagged, plugin.pinned.digested);
    }, 900_000);

    let readyRange = { fromMs: Number.NaN, toMs: Number.NaN };

    it("installs with helm; its DaemonSet pod runs, ready once registered, confined as the chart says", async () => {
      await cluster.helm("install", plugin.release, plugin.chart, "--namespace", plugin.namespace, "--set", `nri.socketPath=${cluster.nriSocket}`, "--set-file", `config=${configFile(1)}`, ...plugin.installArgs, "--wait", "--timeout", "3m");
      const sets = await cluster.api.get<{ items: KubeObject[] }>(`/apis/apps/v1/namespaces/${plugin.namespace}/daemonsets?labelSelector=app.kubernetes.io/instance=${plugin.release}`);
      expect(sets.items.map((d) => [d.status?.desiredNumberScheduled, d.status?.numberReady])).toEqual([[1, 1]]);
      const pods = await pluginPods(cluster, plugin.namespace, plugin.release);
      expect(pods.map(podReady)).toEqual([true]);
      expect((pods[0]!.spec as { priorityClassName: string }).priorityClassName).toBe("system-node-critical");
      await readyPluginPod();
      // What the deployment guide has users check.
      const table = (await cluster.kubectl("-n", plugin.namespace, "get", "daemonset", "-l", `app.kubernetes.io/instance=${plugin.release}`)).trim().split("\n");
      expect(table[0]!.split(/\s+/u).slice(1, 6)).toEqual(["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE"]);
      expect(table.slice(1).map((l) => l.split(/\s+/u).slice(1, 6))).toEqual([["1", "1", "1", "1", "1"]]);
      expect(await cluster.kubectl("-n", plugin.namespace, "logs", "-l", `app.kubernetes.io/instance=${plugin.release}`)).toMatch(/: registered/u);
      // The hardened pod: the runtime's seccomp profile, no API token, and so the process.
      const spec = pods[0]!.spec as { automountServiceAccountToken?: boolean; securityContext?: { seccompProfile?: { type: string } }; volumes?: { name: string }[] };
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.securityContext?.seccompProfile).toEqual({ type: "RuntimeDefault" });
      expect((spec.volumes ?? []).map((v) => v.name).filter((n) => n.startsWith("kube-api-access"))).toEqual([]);
      expect(confinement(await containerPid(cluster, pods[0]!.metadata.name))).toMatchObject(plugin.confinement);
      readyRange = await readyAfterRegistration(cluster, plugin.namespace, pods[0]!);
    });

    it("adjusts a pod created afterwards: environment, annotation, pids limit", async () => {
      await expectAdjusted(1);
    });

    it("rolls on helm upgrade with a changed config, which takes effect", async () => {
      const before = (await pluginPods(cluster, plugin.namespace, plugin.release))[0]!;
      await cluster.helm("upgrade", plugin.release, plugin.chart, "--namespace", plugin.namespace, "--reuse-values", "--set-file", `config=${configFile(2)}`, "--wait", "--timeout", "3m");
      const after = await readyPluginPod(before.metadata.uid);
      expect(after.metadata.uid).not.toBe(before.metadata.uid);
      await expectAdjusted(2);
    });

    it("is healed by its DaemonSet when its pod is deleted", async () => {
      const before = (await pluginPods(cluster, plugin.namespace, plugin.release))[0]!;
      await cluster.api.call("DELETE", `/api/v1/namespaces/${plugin.namespace}/pods/${before.metadata.name}`);
      await readyPluginPod(before.metadata.uid);
      await expectAdjusted(2);
    });

    it("survives a runtime restart", async () => {
      const before = (await pluginPods(cluster, plugin.namespace, plugin.release))[0]!;
      await cluster.stopRuntime();
      await cluster.startRuntime();
      await cluster.api.waitFor("/api/v1/nodes", `fieldSelector=metadata.name=${NODE}`, (n) => conditionTrue(n, "Ready"), "the node did not come back Ready", 120_000);
      await waitUntil(() => nriConnections(cluster) === 1, `${plugin.release} did not reconnect after the runtime restart`, 120_000, () => `; runtime log: ${cluster.runtimeLog}`);
      const after = await readyPluginPod();
      // The same pod: the plugin reconnects by itself rather than being replaced.
      expect(after.metadata.uid).toBe(before.metadata.uid);
      await expectAdjusted(2);
    });

    it("measures the pod start latency it adds, its memory and restarts", async () => {
      const times: number[] = [];
      for (let i = 0; i < LATENCY_RUNS; i++) times.push(await expectAdjusted(2));
      const pod = (await pluginPods(cluster, plugin.namespace, plugin.release))[0]!;
      const memory = await podMemory(cluster, plugin.namespace, pod.metadata.name);
      expect(memory.workingSetBytes).toBeGreaterThan(0);
      // The memory its chart requests is what the scheduler reserves for it on every node, sized
      // from measurements (docs/deployment.md): a plugin above it has outgrown its chart.
      expect(memory.workingSetBytes).toBeLessThanOrEqual(plugin.memoryRequest);
      // Reconnecting after the runtime restart is the plugin's own doing: its container never restarted.
      expect(restarts(pod)).toBe(0);
      figures.set(plugin.language, { startMs: median(times), baselineMs: Number.NaN, memory, restarts: restarts(pod), readyAfterRegistration: readyRange });
    });

    // The chart nri-wire build writes serves metrics when asked: the pod uses the host's network,
    // so the node's port 9400 + index answers (docs/operations.md).
    it.runIf(language === "TypeScript")("serves /metrics on the node once helm upgrade turns metrics on, counting the pods' events", async () => {
      const before = (await pluginPods(cluster, plugin.namespace, plugin.release))[0]!;
      await cluster.helm("upgrade", plugin.release, plugin.chart, "--namespace", plugin.namespace, "--reuse-values", "--set", "metrics.enabled=true", "--wait", "--timeout", "3m");
      const pod = await readyPluginPod(before.metadata.uid);
      expect(pod.metadata.annotations?.["prometheus.io/scrape"]).toBe("true");
      const port = pod.metadata.annotations?.["prometheus.io/port"];
      expect(port).toBe("9450");
      await expectAdjusted(2);
      const text = await (await fetch(`http://127.0.0.1:${port!}/metrics`)).text();
      expect(text).toMatch(/^nri_plugin_events_total\{plugin="50-env-injector",method="CreateContainer",outcome="success"\} [1-9]/mu);
      expect(text).toContain('nri_plugin_connected{plugin="50-env-injector"} 1');
    });

    it("adjusts nothing once the documented helm uninstall returns, and leaves NRI clean", async () => {
      // As docs/deployment.md says: the DaemonSet goes only once its pods have, and helm reads
      // every resource until it is gone (a bare --wait may stop before the DaemonSet is).
      await cluster.helm("uninstall", plugin.release, "--namespace", plugin.namespace, "--cascade", "foreground", "--wait=legacy", "--timeout", "3m");
      const all = await cluster.api.get<{ items: KubeObject[] }>(`/api/v1/namespaces/${plugin.namespace}/pods?labelSelector=app.kubernetes.io/instance=${plugin.release}`);
      expect(all.items.map((p) => p.metadata.name)).toEqual([]);
      // A pod created at once is not adjusted.
      const first = nextPod();
      await runTestPod(cluster, first, built.IMAGE!);
      expect((await inside(cluster, first)).env.NRI_WIRE_ADJUSTED).toBeUndefined();
      await deleteTestPod(cluster, first);
      await waitUntil(() => nriConnections(cluster) === 0, `${plugin.release} is still connected after helm uninstall`, 60_000);
      // Pods created now are not adjusted; they start as fast as with no plugin, measured here
      // (rather than once before every plugin) so that both sides run on a warm node.
      const times: number[] = [];
      for (let i = 0; i < LATENCY_RUNS; i++) {
        const pod = nextPod();
        times.push(await runTestPod(cluster, pod, built.IMAGE!));
        const seen = await inside(cluster, pod);
        expect(seen.env.NRI_WIRE_ADJUSTED).toBeUndefined();
        expect(seen.pidsMax).toBe("max");
        await deleteTestPod(cluster, pod);
      }
      figures.get(plugin.language)!.baselineMs = median(times);
      expect(readText(cluster.runtimeLog)).not.toMatch(/level=error.*plugin.*(panic|invalid)/u);
    });
  });

  it("prints the plugins side by side", () => {
    const rows = [...figures].map(
      ([lang, f]) =>
        `cluster: ${lang.padEnd(10)} pod start ${f.startMs.toFixed(0)} ms with the plugin, ${f.baselineMs.toFixed(0)} ms without (medians of ${LATENCY_RUNS}); plugin pod memory ${mib(f.memory.workingSetBytes)} MiB working set, ${mib(f.memory.rssBytes)} MiB RSS; restarts ${f.restarts}; Ready ${f.readyAfterRegistration.fromMs.toFixed(0)}–${f.readyAfterRegistration.toMs.toFixed(0)} ms after registering`,
    );
    console.log(rows.join("\n"));
    expect(figures.size).toBe(plugins.length);
  });
});
