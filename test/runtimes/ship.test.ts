import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { go, linux, prerequisites } from "../support/prerequisites.js";
import { containerd } from "./containerd.js";
import { crio } from "./crio.js";
import { NRI_SOCKET, type RunningRuntime, type RuntimeUnderTest } from "./runtime.js";
import { type Built, build, logDir, NRI_WIRE, processesUnder, removeWorkDir, ROOT, run, runForExit, RUNTIME_NEEDS, startLogged, stop, waitUntil, workDir } from "./support.js";

/**
 * A plugin as users ship it, under real runtimes: `nri-wire build` of a plugin entry, then its
 * OCI image loaded into containerd v2.4.2's and CRI-O v1.34.0's image store and run as a pod
 * through CRI with the runtime's NRI socket directory mounted (as the DaemonSet does), and its
 * executable copied into the runtime's plugin directory (pre-installed). Each must register and
 * adjust a container of another pod, and survive a restart of the runtime: the pod's plugin
 * reconnects, the pre-installed one is launched again. Then the Helm chart renders and every
 * object of it and of daemonset.yaml decodes strictly into the Kubernetes API types. Runs as root
 * on Linux with Go (like runtimes.test.ts; the chart checks need only Go on Linux); elsewhere it
 * prints a notice and skips (under CI=true it fails).
 */

const gate = prerequisites("ship", "the built plugin under containerd and CRI-O", RUNTIME_NEEDS);
// The chart checks run no runtime: Go builds helm and the strict decoder, Linux runs the built executable.
const chartGate = prerequisites("ship", "the chart and DaemonSet checks (helm lint and template, strict decode into k8s.io/api)", [linux, go("it builds helm and the decoder")]);

const PLUGIN = { name: "adjuster", idx: "10", entry: join(ROOT, "test/ship/fixtures/adjuster.ts") } as const;
const ID = `${PLUGIN.idx}-${PLUGIN.name}`;
const OUT = join(ROOT, "test/runtimes/.bin/ship");
const STATE_DIR = "/run/nri-plugin";
/** The DaemonSet's securityContext in CRI's words: root, no capability, read-only root, no privilege escalation. */
const DAEMONSET_SECURITY = { run_as_user: { value: 0 }, readonly_rootfs: true, no_new_privs: true, capabilities: { drop_capabilities: ["ALL"] } };

interface Shipped {
  imageRef: string;
  imageName: string;
  executable: string;
  image: string;
}

let shipped: Promise<Shipped> | undefined;

/** `nri-wire build` of the fixture plugin with the cached Node 26, once per run of the suite. */
function ship(node: string): Promise<Shipped> {
  shipped ??= (async () => {
    const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "build", PLUGIN.entry, "--name", PLUGIN.name, "--idx", PLUGIN.idx, "--out", OUT, "--node", node], 600_000);
    if (r.code !== 0) throw new Error(`ship: nri-wire build failed (${r.code}): ${r.stderr}`);
    const ref = /\((nri-wire\/[^:\s]+:[^,\s]+),/.exec(r.stdout)?.[1];
    if (ref === undefined) throw new Error(`ship: nri-wire build printed no image reference: ${r.stdout}`);
    return { imageRef: ref, imageName: `docker.io/${ref}`, executable: join(OUT, ID), image: join(OUT, `${PLUGIN.name}.oci.tar`) };
  })();
  return shipped;
}

/** Polls an asynchronous condition every 200 ms until it holds. */
async function eventually(cond: () => Promise<boolean>, what: string, timeoutMs: number, detail: () => string = () => ""): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`ship: ${what} (waited ${timeoutMs} ms)${detail()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** crictl against one running runtime, and the pods it makes. */
class Cri {
  private readonly config: string;
  constructor(
    private readonly built: Built,
    private readonly dir: string,
    private readonly rt: RunningRuntime,
  ) {
    this.config = join(dir, "ship-crictl.yaml");
    writeFileSync(this.config, `runtime-endpoint: ${rt.endpoint}\nimage-endpoint: ${rt.endpoint}\ntimeout: 60\n`);
  }

  crictl(step: string, ...args: string[]): Promise<string> {
    return run(this.built.CRICTL!, ["--config", this.config, ...args], `crictl ${step}`, this.rt.log, 90_000).then((s) => s.trim());
  }

  /** Exit code and output of a crictl command that may fail. */
  try(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return runForExit(this.built.CRICTL!, ["--config", this.config, ...args], 90_000);
  }

  /**
   * Runs a host-network pod with one container (`security` added to its security context);
   * resolves with the pod's and the container's IDs.
   */
  async pod(tag: string, container: Record<string, unknown>, security: Record<string, unknown> = {}): Promise<{ pod: string; container: string }> {
    const podFile = join(this.dir, `ship-pod-${tag}.json`);
    const ctrFile = join(this.dir, `ship-ctr-${tag}.json`);
    const ns = { namespace_options: { network: 2, pid: 1, ipc: 0 } };
    writeFileSync(podFile, JSON.stringify({ metadata: { name: `ship-${tag}`, namespace: "nri-wire", uid: `ship-${tag}-uid`, attempt: 0 }, log_directory: join(this.dir, "pod-logs", tag), linux: { security_context: ns } }));
    writeFileSync(ctrFile, JSON.stringify({ log_path: "container.log", ...container, linux: { security_context: { ...ns, ...security } } }));
    const pod = await this.crictl("runp", "runp", podFile);
    const id = await this.crictl("create", "create", pod, ctrFile, podFile);
    await this.crictl("start", "start", id);
    return { pod, container: id };
  }

  /** Removes every pod (the plugin's too), so that their shims exit. */
  async removeAll(): Promise<void> {
    await this.crictl("rmp --force --all", "rmp", "--force", "--all");
  }

  /** A pod of the probe image: its container's environment and annotations, then it is removed. */
  async adjustedPod(tag: string): Promise<{ env: string[]; annotations: Record<string, string> }> {
    const { pod, container } = await this.pod(tag, { metadata: { name: `probe-${tag}` }, image: { image: this.built.IMAGE! }, command: ["/probe", "pause"] });
    const env = (await this.crictl("exec env", "exec", container, "/probe", "env")).split("\n");
    const inspect = JSON.parse(await this.crictl("inspect", "inspect", container)) as { info?: { runtimeSpec?: { annotations?: Record<string, string> } } };
    await this.crictl("stopp", "stopp", pod);
    await this.crictl("rmp", "rmp", pod);
    return { env, annotations: inspect.info?.runtimeSpec?.annotations ?? {} };
  }
}

/** Puts the image into the runtime's store: containerd's k8s.io namespace (running), CRI-O's storage (before it starts). */
async function loadImage(runtime: string, built: Built, dir: string, image: Shipped, rt?: RunningRuntime): Promise<void> {
  const log = join(dir, "ship-image.log");
  if (runtime === "containerd") {
    await run(join(built.CONTAINERD_BIN!, "ctr"), ["--address", join(dir, "containerd.sock"), "-n", "k8s.io", "images", "import", image.image], "ctr images import (the plugin's image)", rt?.log ?? log, 300_000);
    return;
  }
  writeFileSync(join(dir, "ship-policy.json"), `{"default":[{"type":"insecureAcceptAnything"}]}\n`);
  await run(
    join(built.CRIO_BIN!, "copyimg"),
    ["--root", join(dir, "storage"), "--runroot", join(dir, "runroot"), "--storage-driver", "vfs", "--signature-policy", join(dir, "ship-policy.json"), "--image-name", image.imageName, "--import-from", `oci-archive:${image.image}`],
    "copyimg (the plugin's image into CRI-O's storage)",
    log,
    300_000,
  );
}

/** The env line and annotation of a container the plugin adjusted with `config`. */
function expectAdjusted(seen: { env: string[]; annotations: Record<string, string> }, config: string, where: string): void {
  expect(seen.env, where).toContain(`NRI_SHIP_ADJUSTED=${config}`);
  expect(seen.annotations["nri-wire/ship"], where).toBe(config);
}

const RUNTIMES: readonly { name: string; make: (b: Built) => RuntimeUnderTest }[] = [
  { name: "containerd", make: containerd },
  { name: "crio", make: crio },
].filter((r) => (process.env.NRI_WIRE_RUNTIMES ?? r.name).split(",").includes(r.name));

describe.skipIf(!gate.ok).each(RUNTIMES)("$name: a plugin built by nri-wire build", ({ name, make }) => {
  const built: Built = {};
  const runtime = make(built);
  let dir = "";
  let logs = "";
  let runs = 0;
  let image!: Shipped;
  let rt: RunningRuntime | undefined;
  let cri!: Cri;
  const createdHostPaths: string[] = [];
  const where = () => `runtime log: ${rt?.log ?? "(none)"}`;

  beforeAll(async () => {
    createdHostPaths.push(...runtime.hostPaths.filter((h) => !existsSync(h)));
    Object.assign(built, await build([name, "node"]));
    image = await ship(built.NODE!);
    dir = workDir(name === "containerd" ? "shipc" : "shipo");
    logs = logDir(built, `ship-${name}`);
    if (name !== "containerd") await loadImage(name, built, dir, image);
    rt = await runtime.start({ dir, logs }, ++runs);
    if (name === "containerd") await loadImage(name, built, dir, image, rt);
    cri = new Cri(built, dir, rt);
  }, 1_800_000);

  afterAll(async () => {
    if (dir === "") return;
    if (rt !== undefined) {
      await cri.removeAll().catch(() => undefined); // a failure shows as a leak below
      await rt.stop();
      // A pre-installed plugin exits once its runtime has gone.
      await waitUntil(() => processesUnder(dir).length === 0, "", 15_000).catch(() => undefined);
    }
    const leaks = await removeWorkDir(dir);
    for (const h of createdHostPaths) rmSync(h, { recursive: true, force: true });
    if (leaks.length > 0) throw new Error(`ship: ${name} left behind: ${leaks.join("; ")}`);
  }, 180_000);

  let pluginContainer = "";
  let lastProbe = "";
  /** The plugin pod's readiness probe, run as the kubelet runs it: exec in the container. */
  const probeReady = async (): Promise<{ code: number | null; text: string }> => {
    const r = await cri.try("exec", pluginContainer, `/${ID}`, "probe", "--state", STATE_DIR);
    lastProbe = `${r.stdout}${r.stderr}`.trim();
    return { code: r.code, text: lastProbe };
  };

  it("its image, run as a pod as the DaemonSet runs it (NRI socket directory mounted, no capability, read-only root), registers (its readiness probe says so) and adjusts another pod's container with the mounted config", async () => {
    const config = join(dir, "ship-config");
    const state = join(dir, "ship-state");
    mkdirSync(config, { recursive: true });
    mkdirSync(state, { recursive: true });
    writeFileSync(join(config, "config"), "from-configmap\n");
    // The reference the DaemonSet uses; CRI resolves it to the name the archive carries.
    const ref = name === "containerd" ? image.imageRef : image.imageName;
    const { container } = await cri.pod("plugin", {
      metadata: { name: "plugin" },
      image: { image: ref },
      args: ["--socket", "/var/run/nri/nri.sock", "--config", "/etc/nri-plugin/config", "--state", STATE_DIR],
      mounts: [
        { container_path: "/var/run/nri", host_path: join(dir, NRI_SOCKET, "..") },
        { container_path: "/etc/nri-plugin", host_path: config, readonly: true },
        { container_path: STATE_DIR, host_path: state },
      ],
    }, DAEMONSET_SECURITY);
    pluginContainer = container;
    await eventually(async () => (await probeReady()).code === 0, "the plugin pod never became ready (registered)", 60_000, () => `; last probe: ${lastProbe}; ${where()}`);
    expect((await probeReady()).text).toMatch(new RegExp(`^${ID}: registered with ${name === "containerd" ? "containerd" : "cri-o"} `));
    expectAdjusted(await cri.adjustedPod("a"), "from-configmap", where());
  }, 600_000);

  it("survives a restart of the runtime: the pod's plugin reconnects by itself and adjusts the next pod", async () => {
    if (pluginContainer === "") throw new Error("ship: no plugin pod (the test before failed)");
    await rt!.stop();
    rt = await runtime.start({ dir, logs }, ++runs);
    cri = new Cri(built, dir, rt);
    await eventually(async () => (await probeReady()).code === 0, "the plugin pod did not become ready again after the restart", 60_000, () => `; last probe: ${lastProbe}; ${where()}`);
    expectAdjusted(await cri.adjustedPod("b"), "from-configmap", where());
    const logsOut = await cri.try("logs", pluginContainer);
    const lines = `${logsOut.stdout}${logsOut.stderr}`.trim().split("\n");
    // Registered, lost the runtime, registered again (retries in between, as many as it took).
    expect(lines.filter((l) => l.startsWith(`${ID}: registered with `)).length, lines.join("\n")).toBe(2);
    expect(lines.some((l) => l.startsWith(`${ID}: connection closed: `)), lines.join("\n")).toBe(true);
  }, 600_000);

  it("refuses to start with one line in the container's log when the socket is missing", async () => {
    const empty = join(dir, "ship-no-socket");
    mkdirSync(empty, { recursive: true });
    const ref = name === "containerd" ? image.imageRef : image.imageName;
    const { container } = await cri.pod("nosocket", { metadata: { name: "plugin-nosocket" }, image: { image: ref }, mounts: [{ container_path: "/var/run/nri", host_path: empty }] }, DAEMONSET_SECURITY);
    let status: { state?: string; exitCode?: number } = {};
    await eventually(
      async () => {
        status = (JSON.parse(await cri.crictl("inspect", "inspect", container)) as { status: { state?: string; exitCode?: number } }).status;
        return status.state === "CONTAINER_EXITED";
      },
      "the plugin without a socket did not exit",
      60_000,
      () => `; ${where()}`,
    );
    expect(status.exitCode).toBe(1);
    const out = await cri.try("logs", container);
    expect(`${out.stdout}${out.stderr}`.trim().split("\n")).toEqual([
      `${ID}: cannot start: socket /var/run/nri/nri.sock: missing (is NRI enabled in the runtime, and its socket directory mounted?)`,
    ]);
  }, 300_000);

  it("as a service on the host (the systemd unit's command line): registers, adjusts a pod, reconnects after a runtime restart", async () => {
    // One adjuster at a time: the pod's goes.
    await cri.removeAll();
    const config = join(dir, "ship-service.conf");
    const state = join(dir, "ship-service-state");
    writeFileSync(config, "from-service-config\n");
    const log = join(logs, "service.log");
    const service = startLogged(image.executable, ["--socket", join(dir, NRI_SOCKET), "--config", config, "--state", state], log, {});
    const ready = async (): Promise<boolean> => (await runForExit(image.executable, ["probe", "--state", state])).code === 0;
    try {
      await eventually(ready, "the service never registered", 60_000, () => `; its log: ${log}; ${where()}`);
      expectAdjusted(await cri.adjustedPod("s1"), "from-service-config", where());
      await rt!.stop();
      await eventually(async () => !(await ready()), "the service still says registered with the runtime stopped", 30_000, () => `; its log: ${log}`);
      rt = await runtime.start({ dir, logs }, ++runs);
      cri = new Cri(built, dir, rt);
      await eventually(ready, "the service did not register again after the restart", 60_000, () => `; its log: ${log}; ${where()}`);
      expectAdjusted(await cri.adjustedPod("s2"), "from-service-config", where());
    } finally {
      await stop(service);
    }
  }, 600_000);

  it("pre-installed (NN-NAME copied into the plugin directory, its config in the config directory): launched by the runtime, adjusts a pod, launched again after a restart", async () => {
    await cri.removeAll();
    await rt!.stop();
    const install = (pluginDir: string, configDir: string): void => {
      // As docs/deployment.md installs it.
      execFileSync("install", ["-m", "0755", image.executable, join(pluginDir, ID)]);
      writeFileSync(join(configDir, `${ID}.conf`), "from-conf-d");
    };
    const plugins = () => processesUnder(join(dir, "nri/plugins", ID)).map((p) => p.pid);
    rt = await runtime.start({ dir, logs }, ++runs, install);
    cri = new Cri(built, dir, rt);
    await waitUntil(() => plugins().length === 1, "the runtime did not launch the pre-installed plugin", 60_000, () => `; ${where()}`);
    const first = plugins()[0]!;
    expectAdjusted(await cri.adjustedPod("c"), "from-conf-d", where());

    await rt.stop();
    // Its connection gone, the plugin exits; the runtime launches it again when it starts.
    await waitUntil(() => !existsSync(`/proc/${first}`), `the pre-installed plugin (pid ${first}) did not exit when the runtime stopped`, 30_000);
    rt = await runtime.start({ dir, logs }, ++runs, install);
    cri = new Cri(built, dir, rt);
    await waitUntil(() => plugins().length === 1, "the runtime did not launch the pre-installed plugin again", 60_000, () => `; ${where()}`);
    expect(plugins()[0]).not.toBe(first);
    expectAdjusted(await cri.adjustedPod("d"), "from-conf-d", where());
  }, 600_000);
});

describe.skipIf(!chartGate.ok)("the chart and the DaemonSet", () => {
  let helm = "";
  let decoder = "";
  let node = "";
  beforeAll(async () => {
    const b = await build(["helm", "node"]);
    helm = b.HELM!;
    node = b.NODE!;
    decoder = join(ROOT, "test/runtimes/.bin/k8s-decode");
    await run("go", ["-C", join(ROOT, "test/ship/k8s-decode"), "build", "-o", decoder, "."], "go build k8s-decode", join(ROOT, "test/ship/k8s-decode"), 600_000);
    await ship(node);
  }, 1_800_000);

  const decode = async (file: string): Promise<string[]> => {
    const r = await runForExit(decoder, [file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return r.stdout.trim().split("\n");
  };

  it("helm lint passes and helm template renders objects that decode strictly into the Kubernetes API types, with the values applied", async () => {
    const chart = join(OUT, "chart");
    const lint = await runForExit(helm, ["lint", chart]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    const rendered = join(OUT, "rendered.yaml");
    writeFileSync(rendered, await run(helm, ["template", "nri-plugin-adjuster", chart, "--namespace", "kube-system", "--set", "config=hello", "--set", "nri.plugin.index=20"], "helm template", chart));
    expect(await decode(rendered)).toEqual(["ConfigMap kube-system/nri-plugin-adjuster-config", "DaemonSet kube-system/nri-plugin-adjuster"]);
    const text = await run(helm, ["template", "nri-plugin-adjuster", chart, "--namespace", "kube-system", "--set", "config=hello", "--set", "nri.plugin.index=20"], "helm template", chart);
    expect(text).toContain('config: "hello"');
    expect(text).toContain('- --idx\n            - "20"');
  }, 300_000);

  it("kubernetes/daemonset.yaml decodes strictly into the Kubernetes API types", async () => {
    expect(await decode(join(OUT, "kubernetes/daemonset.yaml"))).toEqual(["ConfigMap kube-system/nri-plugin-adjuster-config", "DaemonSet kube-system/nri-plugin-adjuster"]);
  });

  it("the decoder refuses an unknown field", async () => {
    const bad = join(OUT, "unknown-field.yaml");
    writeFileSync(bad, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {}\nunknownField: 1\n");
    const r = await runForExit(decoder, [bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown field "unknownField"');
  });
});
