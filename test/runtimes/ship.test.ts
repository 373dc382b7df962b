import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prerequisites } from "../support/prerequisites.js";
import { confinement } from "./confinement.js";
import { containerd } from "./containerd.js";
import { crio } from "./crio.js";
import { registerQemu } from "./emulation.js";
import { NRI_SOCKET, NRI_TIMEOUTS, type RunningRuntime, type RuntimeUnderTest } from "./runtime.js";
import { type Built, build, environment, freePort, logDir, NRI_WIRE, processesUnder, readText, removeWorkDir, ROOT, run, runForExit, RUNTIME_NEEDS, type Started, startLogged, stop, waitUntil, workDir } from "./support.js";

/**
 * A plugin as users ship it, under real runtimes: `nri-wire build` of a plugin entry for the
 * host's platform and linux/arm64, then its layered image loaded from the archive into
 * containerd v2.4.2's and CRI-O v1.34.0's image store, and pulled through CRI from a local
 * registry (`crane registry serve`) it was pushed to, and run as a pod through CRI with the
 * runtime's NRI socket directory mounted and the DaemonSet's security (as the DaemonSet does);
 * its executable copied into the runtime's plugin directory (pre-installed). Each must register
 * and adjust a container of another pod, and survive a restart of the runtime: the pod's plugin
 * reconnects, the pre-installed one is launched again. The arm64 forms run through qemu-user
 * (binfmt_misc): the executable pre-installed in both runtimes, the image as a container of
 * containerd (`ctr run --platform linux/arm64`), both registering and adjusting pods, and both
 * passing `nri-wire test-plugin`. Then the Helm chart renders and every object of it and of
 * daemonset.yaml decodes strictly into the Kubernetes API types. Runs as root on Linux with Go
 * (like runtimes.test.ts; the chart checks build both platforms, so they too need root to install
 * qemu-user and the other architecture's libraries); elsewhere it prints a notice and skips
 * (under CI=true it fails).
 */

const gate = prerequisites("ship", "the built plugin under containerd and CRI-O, its arm64 forms, the build on Node 22 and 24, and the chart and DaemonSet checks", RUNTIME_NEEDS);

const PLUGIN = { name: "adjuster", idx: "10", entry: join(ROOT, "test/ship/fixtures/adjuster.ts") } as const;
const ID = `${PLUGIN.idx}-${PLUGIN.name}`;
const OUT = join(ROOT, "test/runtimes/.bin/ship");
const OUT_BUN = join(ROOT, "test/runtimes/.bin/ship-bun");
const STATE_DIR = "/run/nri-plugin";
/**
 * The DaemonSet's securityContext in CRI's words: root, no capability, read-only root, no
 * privilege escalation, the runtime's default seccomp profile (profile_type 0, RuntimeDefault:
 * what the kubelet sends for the pod's seccompProfile).
 */
const DAEMONSET_SECURITY = { run_as_user: { value: 0 }, readonly_rootfs: true, no_new_privs: true, capabilities: { drop_capabilities: ["ALL"] }, seccomp: { profile_type: 0 } };

interface Shipped {
  /** `REPOSITORY:TAG`, fully qualified. */
  imageRef: string;
  /** The image index's digest. */
  digest: string;
  /** The host platform's executable, and the other platform's. */
  executable: string;
  foreignExecutable: string;
  foreignPlatform: string;
  image: string;
}

let shipped: Promise<Shipped> | undefined;

/** `nri-wire build` of the fixture plugin for this host and the other platform, with the cached Node 26, once per run of the suite. */
function ship(b: Built): Promise<Shipped> {
  shipped ??= (async () => {
    const host = `linux/${process.arch === "x64" ? "amd64" : "arm64"}`;
    const args = ["build", PLUGIN.entry, "--name", PLUGIN.name, "--idx", PLUGIN.idx, "--out", OUT, "--node", b.NODE!, "--platform", `${host},${b.FOREIGN_PLATFORM!}`];
    const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), ...args], 1_200_000);
    if (r.code !== 0) throw new Error(`ship: nri-wire build failed (${r.code}): ${r.stderr}`);
    const m = /\(([^@\s]+:[^@\s]+)@(sha256:[0-9a-f]{64}), /.exec(r.stdout);
    if (m === null) throw new Error(`ship: nri-wire build printed no image reference: ${r.stdout}`);
    const slug = (p: string) => p.replace("/", "-");
    return {
      imageRef: m[1]!,
      digest: m[2]!,
      executable: join(OUT, slug(host), ID),
      foreignExecutable: join(OUT, slug(b.FOREIGN_PLATFORM!), ID),
      foreignPlatform: b.FOREIGN_PLATFORM!,
      image: join(OUT, `${PLUGIN.name}.oci.tar`),
    };
  })();
  return shipped;
}

interface Registry {
  /** `127.0.0.1:PORT`. */
  host: string;
  /** The image's repository there. */
  repository: string;
  proc: Started;
  dir: string;
}

/** The same plugin built with `--engine bun` for this host, under its own repository: its executable and image. */
interface ShippedBun {
  imageRef: string;
  executable: string;
  image: string;
}

let shippedBun: Promise<ShippedBun> | undefined;

/** `nri-wire build --engine bun` of the fixture plugin for this host (Bun from the npm registry), once per run of the suite. */
function shipBun(): Promise<ShippedBun> {
  shippedBun ??= (async () => {
    const args = ["build", PLUGIN.entry, "--name", PLUGIN.name, "--idx", PLUGIN.idx, "--out", OUT_BUN, "--engine", "bun", "--repository", `localhost/nri-wire/${PLUGIN.name}-bun`];
    const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), ...args], 1_200_000);
    if (r.code !== 0) throw new Error(`ship: nri-wire build --engine bun failed (${r.code}): ${r.stderr}`);
    const m = /\(([^@\s]+:[^@\s]+)@sha256:[0-9a-f]{64}, /.exec(r.stdout);
    if (m === null) throw new Error(`ship: nri-wire build --engine bun printed no image reference: ${r.stdout}`);
    return { imageRef: m[1]!, executable: join(OUT_BUN, ID), image: join(OUT_BUN, `${PLUGIN.name}.oci.tar`) };
  })();
  return shippedBun;
}

let registry: Promise<Registry> | undefined;

/**
 * A local registry (`crane registry serve`, plain HTTP on 127.0.0.1) with the image pushed to it
 * as the docs say (the archive unpacked, `crane push DIR REF`), once per run of the suite.
 */
function startRegistry(b: Built, image: Shipped): Promise<Registry> {
  registry ??= (async () => {
    const dir = workDir("shipreg");
    const port = await freePort();
    const host = `127.0.0.1:${port}`;
    const log = join(dir, "registry.log");
    mkdirSync(join(dir, "blobs"));
    const proc = startLogged(b.CRANE!, ["registry", "serve", "--address", host, "--disk", join(dir, "blobs")], log);
    await waitUntil(() => readText(log).includes("serving on port"), "start crane registry serve: it did not say it serves", 30_000, () => `; log: ${log}`);
    const layout = join(dir, "layout");
    mkdirSync(layout);
    execFileSync("tar", ["-xf", image.image, "-C", layout]);
    const repository = `${host}/nri-wire/${PLUGIN.name}`;
    const tag = image.imageRef.slice(image.imageRef.lastIndexOf(":") + 1);
    await run(b.CRANE!, ["push", "--insecure", layout, `${repository}:${tag}`], "crane push", log, 300_000);
    return { host, repository, proc, dir };
  })();
  return registry;
}

afterAll(async () => {
  if (registry === undefined) return;
  const r = await registry.catch(() => undefined);
  if (r === undefined) return;
  await stop(r.proc);
  await removeWorkDir(r.dir);
});

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
    return run(this.built.CRICTL!, ["--config", this.config, ...args], `crictl ${step}`, this.rt.log, 300_000).then((s) => s.trim());
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

  /** The lines of a container's log. */
  async logLines(container: string): Promise<string[]> {
    const r = await this.try("logs", container);
    return `${r.stdout}${r.stderr}`.trim().split("\n");
  }

  /** The host PID of a container's process. */
  async pid(container: string): Promise<number> {
    const info = JSON.parse(await this.crictl("inspect", "inspect", container)) as { info: { pid: number } };
    return info.info.pid;
  }
}

/** Puts the archive into the runtime's store: containerd's k8s.io namespace (running), CRI-O's storage (before it starts). */
async function loadImage(runtime: string, built: Built, dir: string, image: Pick<Shipped, "image" | "imageRef">, rt?: RunningRuntime): Promise<void> {
  const log = join(dir, "ship-image.log");
  if (runtime === "containerd") {
    // As docs/deployment.md loads it.
    await run(join(built.CONTAINERD_BIN!, "ctr"), ["--address", join(dir, "containerd.sock"), "-n", "k8s.io", "images", "import", image.image], "ctr images import (the plugin's image)", rt?.log ?? log, 300_000);
    return;
  }
  // What `skopeo copy oci-archive:FILE containers-storage:NAME` does, with CRI-O's own test tool.
  writeFileSync(join(dir, "ship-policy.json"), `{"default":[{"type":"insecureAcceptAnything"}]}\n`);
  await run(
    join(built.CRIO_BIN!, "copyimg"),
    ["--root", join(dir, "storage"), "--runroot", join(dir, "runroot"), "--storage-driver", "vfs", "--signature-policy", join(dir, "ship-policy.json"), "--image-name", image.imageRef, "--import-from", `oci-archive:${image.image}`],
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
  let bunImage!: ShippedBun;
  let reg!: Registry;
  let rt: RunningRuntime | undefined;
  let cri!: Cri;
  let undoQemu: (() => void) | undefined;
  const createdHostPaths: string[] = [];
  const where = () => `runtime log: ${rt?.log ?? "(none)"}`;
  /** Starts the runtime; `emulated` gives a pre-installed plugin run by qemu-user six times the registration timeout (its start-up under emulation takes seconds). */
  const start = async (preinstalled?: (pluginDir: string, configDir: string) => void, emulated = false): Promise<void> => {
    rt = await runtime.start({ dir, logs, registry: reg.host, ...(emulated ? { registrationS: NRI_TIMEOUTS.registrationS * 6 } : {}) }, ++runs, preinstalled);
    cri = new Cri(built, dir, rt);
  };

  beforeAll(async () => {
    createdHostPaths.push(...runtime.hostPaths.filter((h) => !existsSync(h)));
    Object.assign(built, await build([name, "node", "crane", "qemu"]));
    image = await ship(built);
    bunImage = await shipBun();
    reg = await startRegistry(built, image);
    undoQemu = registerQemu(built.QEMU!.replace(/^.*qemu-(\w+)-static$/, "$1"), built.QEMU!);
    dir = workDir(name === "containerd" ? "shipc" : "shipo");
    logs = logDir(built, `ship-${name}`);
    if (name !== "containerd") for (const i of [image, bunImage]) await loadImage(name, built, dir, i);
    await start();
    if (name === "containerd") for (const i of [image, bunImage]) await loadImage(name, built, dir, i, rt);
  }, 3_600_000);

  afterAll(async () => {
    undoQemu?.();
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
  const probeReady = async (container = pluginContainer): Promise<{ code: number | null; text: string }> => {
    const r = await cri.try("exec", container, `/${ID}`, "probe", "--state", STATE_DIR);
    lastProbe = `${r.stdout}${r.stderr}`.trim();
    return { code: r.code, text: lastProbe };
  };
  /** The plugin's pod as the DaemonSet runs it, from image `ref`, with its config, state and the NRI socket directory mounted. */
  const pluginPod = async (tag: string, ref: string, config: string): Promise<string> => {
    const configDir = join(dir, `ship-config-${tag}`);
    const state = join(dir, `ship-state-${tag}`);
    mkdirSync(configDir, { recursive: true });
    mkdirSync(state, { recursive: true });
    writeFileSync(join(configDir, "config"), `${config}\n`);
    const { container } = await cri.pod(
      tag,
      {
        metadata: { name: "plugin" },
        image: { image: ref },
        args: ["--socket", "/var/run/nri/nri.sock", "--config", "/etc/nri-plugin/config", "--state", STATE_DIR],
        mounts: [
          { container_path: "/var/run/nri", host_path: join(dir, NRI_SOCKET, "..") },
          { container_path: "/etc/nri-plugin", host_path: configDir, readonly: true },
          { container_path: STATE_DIR, host_path: state },
        ],
      },
      DAEMONSET_SECURITY,
    );
    await eventually(async () => (await probeReady(container)).code === 0, `the plugin pod from ${ref} never became ready (registered)`, 60_000, () => `; last probe: ${lastProbe}; ${where()}`);
    return container;
  };
  const runtimeName = name === "containerd" ? "containerd" : "cri-o";

  it("its image, loaded from the archive and run as a pod as the DaemonSet runs it (NRI socket directory mounted, no capability, read-only root, seccomp), registers (its readiness probe says so) and adjusts another pod's container with the mounted config", async () => {
    // The name the DaemonSet uses: fully qualified, the same for both runtimes.
    pluginContainer = await pluginPod("plugin", image.imageRef, "from-configmap");
    expect((await probeReady()).text).toMatch(new RegExp(`^${ID}: registered with ${runtimeName} `));
    expectAdjusted(await cri.adjustedPod("a"), "from-configmap", where());
    // One line: registered; the code cache was accepted (no line says otherwise).
    expect(await cri.logLines(pluginContainer)).toEqual([expect.stringMatching(new RegExp(`^${ID}: registered with ${runtimeName} \\S+ on /var/run/nri/nri.sock$`))]);
    // Confined as asked: a seccomp filter, no new privileges, no capability.
    expect(confinement(await cri.pid(pluginContainer))).toEqual({ seccomp: "2", noNewPrivs: "1", capEff: "0000000000000000" });
    // The runtime starts it with the image's environment: its memory setting included.
    expect(environment(await cri.pid(pluginContainer))).toContain("MALLOC_ARENA_MAX=1");
    // The image has /etc/passwd: CRI-O finds the user it runs, as it does not in the probe
    // image's containers (one static binary, no /etc), for which it warns.
    if (name === "crio") {
      const root = (JSON.parse(await cri.crictl("inspect", "inspect", pluginContainer)) as { info: { runtimeSpec: { root: { path: string } } } }).info.runtimeSpec.root.path;
      const warnings = readText(rt!.log).split("\n").filter((l) => l.includes("Failed to open /etc/passwd"));
      expect(warnings.length).toBeGreaterThan(0);
      expect(warnings.filter((l) => l.includes(`${root}/etc/passwd`))).toEqual([]);
    }
  }, 600_000);

  it("survives a restart of the runtime: the pod's plugin reconnects by itself and adjusts the next pod", async () => {
    if (pluginContainer === "") throw new Error("ship: no plugin pod (the test before failed)");
    await rt!.stop();
    await start();
    await eventually(async () => (await probeReady()).code === 0, "the plugin pod did not become ready again after the restart", 60_000, () => `; last probe: ${lastProbe}; ${where()}`);
    expectAdjusted(await cri.adjustedPod("b"), "from-configmap", where());
    const lines = await cri.logLines(pluginContainer);
    // Registered, lost the runtime, registered again (retries in between, as many as it took).
    expect(lines.filter((l) => l.startsWith(`${ID}: registered with `)).length, lines.join("\n")).toBe(2);
    expect(lines.some((l) => l.startsWith(`${ID}: connection closed: `)), lines.join("\n")).toBe(true);
  }, 600_000);

  it("refuses to start with one line in the container's log when the socket is missing", async () => {
    const empty = join(dir, "ship-no-socket");
    mkdirSync(empty, { recursive: true });
    const { container } = await cri.pod("nosocket", { metadata: { name: "plugin-nosocket" }, image: { image: image.imageRef }, mounts: [{ container_path: "/var/run/nri", host_path: empty }] }, DAEMONSET_SECURITY);
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
    expect(await cri.logLines(container)).toEqual([`${ID}: cannot start: socket /var/run/nri/nri.sock: missing (is NRI enabled in the runtime, and its socket directory mounted?)`]);
  }, 300_000);

  it("pulled through CRI from a registry by tag and by digest (the index's, as the build printed it), it runs as the same image and registers", async () => {
    await cri.removeAll();
    const byTag = `${reg.repository}:${image.imageRef.slice(image.imageRef.lastIndexOf(":") + 1)}`;
    const byDigest = `${reg.repository}@${image.digest}`;
    await cri.crictl("pull (tag)", "pull", byTag);
    await cri.crictl("pull (digest)", "pull", byDigest);
    const seen = JSON.parse(await cri.crictl("inspecti", "inspecti", byTag)) as { status: { repoDigests: string[]; id: string } };
    expect(seen.status.repoDigests).toContain(byDigest);
    const container = await pluginPod("pulled", byDigest, "from-registry");
    expectAdjusted(await cri.adjustedPod("r"), "from-registry", where());
    await cri.crictl("rm plugin", "rm", "--force", container);
  }, 900_000);

  // CRI runs the host's platform; containerd's own client runs another.
  it.runIf(name === "containerd")("its linux/arm64 image runs under qemu-user as a container (ctr run --platform linux/arm64, read-only, seccomp), registers and adjusts a pod", async () => {
    await cri.removeAll();
    const ctr = (step: string, ...args: string[]) => run(join(built.CONTAINERD_BIN!, "ctr"), ["--address", join(dir, "containerd.sock"), "-n", "nri-wire-arm64", ...args], `ctr ${step}`, rt!.log, 600_000);
    await ctr("images import", "images", "import", "--platform", image.foreignPlatform, image.image);
    const log = join(logs, "arm64-image.log");
    await ctr(
      "run",
      "run",
      "-d",
      "--platform",
      image.foreignPlatform,
      "--read-only",
      "--seccomp",
      "--log-uri",
      `file://${log}`,
      "--mount",
      `type=bind,src=${join(dir, NRI_SOCKET, "..")},dst=/var/run/nri,options=rbind:rw`,
      image.imageRef,
      "arm64-plugin",
    );
    try {
      await eventually(async () => readText(log).includes(`${ID}: registered with containerd `), "the arm64 image's plugin did not register", 120_000, () => `; its log: ${log}; ${where()}`);
      expectAdjusted(await cri.adjustedPod("arm64-image"), "default", where());
      // Its process is the arm64 Node run by qemu-user.
      const pid = Number(/^arm64-plugin\s+(\d+)\s+RUNNING$/m.exec(await ctr("task ls", "task", "ls"))?.[1]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      expect(cmdline[0]).toMatch(/qemu/);
      expect(cmdline).toContain("/usr/local/bin/node");
    } finally {
      await ctr("task kill", "task", "kill", "-s", "SIGTERM", "arm64-plugin").catch(() => undefined);
      await eventually(async () => !(await ctr("task ls", "task", "ls")).includes("RUNNING"), "the arm64 plugin did not stop on SIGTERM", 60_000).catch(() => undefined);
      await ctr("task rm", "task", "rm", "-f", "arm64-plugin").catch(() => undefined);
      await ctr("containers rm", "containers", "rm", "arm64-plugin");
    }
    expect(readText(log).trim().split("\n")).toContain(`${ID}: SIGTERM: stopping`);
  }, 900_000);

  it("as a service on the host (the systemd unit's command line): registers, adjusts a pod, reconnects after a runtime restart", async () => {
    // One adjuster at a time: the pod's goes.
    await cri.removeAll();
    const config = join(dir, "ship-service.conf");
    const state = join(dir, "ship-service-state");
    writeFileSync(config, "from-service-config\n");
    const log = join(logs, "service.log");
    // The unit's environment (docs/deployment.md): nothing else.
    const service = startLogged(image.executable, ["--socket", join(dir, NRI_SOCKET), "--config", config, "--state", state], log, { MALLOC_ARENA_MAX: "1" });
    const ready = async (): Promise<boolean> => (await runForExit(image.executable, ["probe", "--state", state])).code === 0;
    try {
      await eventually(ready, "the service never registered", 60_000, () => `; its log: ${log}; ${where()}`);
      expectAdjusted(await cri.adjustedPod("s1"), "from-service-config", where());
      await rt!.stop();
      await eventually(async () => !(await ready()), "the service still says registered with the runtime stopped", 30_000, () => `; its log: ${log}`);
      await start();
      await eventually(ready, "the service did not register again after the restart", 60_000, () => `; its log: ${log}; ${where()}`);
      expectAdjusted(await cri.adjustedPod("s2"), "from-service-config", where());
    } finally {
      await stop(service);
    }
  }, 600_000);

  it.each([
    { form: "host", exe: () => image.executable, emulated: false },
    { form: "linux/arm64 (through qemu-user)", exe: () => image.foreignExecutable, emulated: true },
    { form: "host, engine bun", exe: () => bunImage.executable, emulated: false },
  ])("pre-installed, $form (NN-NAME copied into the plugin directory, its config in the config directory): launched by the runtime, adjusts a pod, launched again after a restart", async ({ exe, emulated }) => {
    await cri.removeAll();
    await rt!.stop();
    const install = (pluginDir: string, configDir: string): void => {
      // As docs/deployment.md installs it.
      execFileSync("install", ["-m", "0755", exe(), join(pluginDir, ID)]);
      writeFileSync(join(configDir, `${ID}.conf`), "from-conf-d");
    };
    const plugins = () => processesUnder(join(dir, "nri/plugins", ID)).map((p) => p.pid);
    await start(install, emulated);
    await waitUntil(() => plugins().length === 1, "the runtime did not launch the pre-installed plugin", 60_000, () => `; ${where()}`);
    const first = plugins()[0]!;
    expectAdjusted(await cri.adjustedPod("c"), "from-conf-d", where());

    await rt!.stop();
    // Its connection gone, the plugin exits; the runtime launches it again when it starts.
    await waitUntil(() => !existsSync(`/proc/${first}`), `the pre-installed plugin (pid ${first}) did not exit when the runtime stopped`, 30_000);
    await start(install, emulated);
    await waitUntil(() => plugins().length === 1, "the runtime did not launch the pre-installed plugin again", 60_000, () => `; ${where()}`);
    expect(plugins()[0]).not.toBe(first);
    expectAdjusted(await cri.adjustedPod("d"), "from-conf-d", where());
  }, 600_000);

  it("its Bun image (--engine bun), run as a pod as the DaemonSet runs it, registers (its readiness probe says so), adjusts another pod's container with the mounted config, and is confined alike", async () => {
    // No other instance of the plugin: the pre-installed one goes with the runtime's restart.
    await cri.removeAll();
    await rt!.stop();
    await start();
    const container = await pluginPod("plugin-bun", bunImage.imageRef, "from-bun-configmap");
    expect((await probeReady(container)).text).toMatch(new RegExp(`^${ID}: registered with ${runtimeName} `));
    expectAdjusted(await cri.adjustedPod("e"), "from-bun-configmap", where());
    expect(await cri.logLines(container)).toEqual([expect.stringMatching(new RegExp(`^${ID}: registered with ${runtimeName} \\S+ on /var/run/nri/nri.sock$`))]);
    expect(confinement(await cri.pid(container))).toEqual({ seccomp: "2", noNewPrivs: "1", capEff: "0000000000000000" });
    expect(environment(await cri.pid(container))).toContain("BUN_JSC_useFTLJIT=0");
  }, 600_000);
});

describe.skipIf(!gate.ok)("the linux/arm64 forms under nri-wire test-plugin (through qemu-user)", () => {
  let image!: Shipped;
  let rootfs = "";
  let undoQemu: (() => void) | undefined;
  let work = "";
  beforeAll(async () => {
    const b = await build(["node", "qemu"]);
    image = await ship(b);
    undoQemu = registerQemu(b.QEMU!.replace(/^.*qemu-(\w+)-static$/, "$1"), b.QEMU!);
    work = workDir("shiparm");
    // The arm64 image's layers, unpacked: its file system and nothing else.
    rootfs = join(work, "rootfs");
    const layout = join(work, "layout");
    mkdirSync(rootfs);
    mkdirSync(layout);
    execFileSync("tar", ["-xf", image.image, "-C", layout]);
    const blob = (d: string) => join(layout, "blobs/sha256", d.slice("sha256:".length));
    const top = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: { digest: string }[] };
    const index = JSON.parse(readFileSync(blob(top.manifests[0]!.digest), "utf8")) as { manifests: { digest: string; platform: { architecture: string } }[] };
    const arch = image.foreignPlatform.split("/")[1];
    const manifest = JSON.parse(readFileSync(blob(index.manifests.find((m) => m.platform.architecture === arch)!.digest), "utf8")) as { layers: { digest: string }[] };
    for (const l of manifest.layers) execFileSync("tar", ["-xzf", blob(l.digest), "-C", rootfs]);
  }, 3_600_000);

  afterAll(async () => {
    undoQemu?.();
    if (work !== "") await removeWorkDir(work);
  });

  /** `nri-wire test-plugin --json` in the v1beta1 dialect, launching `command` as a runtime launches a pre-installed plugin. */
  const testPlugin = async (command: string[]): Promise<{ passed: boolean; failed: unknown[] }> => {
    const timeouts = ["--registration-timeout", `${NRI_TIMEOUTS.registrationS * 1000 * 3}`, "--request-timeout", `${NRI_TIMEOUTS.requestS * 1000 * 3}`, "--gone-timeout", "20000"];
    const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "test-plugin", "--json", "--dialect", "v1beta1", ...timeouts, "--name", PLUGIN.name, "--idx", PLUGIN.idx, "--", ...command], 1_800_000);
    const report = JSON.parse(r.stdout) as { passed: boolean; dialects: { checks: { status: string }[] }[] };
    expect(r.code).toBe(report.passed ? 0 : 1);
    return { passed: report.passed, failed: report.dialects.flatMap((d) => d.checks.filter((c) => c.status === "fail")) };
  };

  it("the arm64 single executable passes", async () => {
    const r = await testPlugin([image.foreignExecutable]);
    expect(r.failed).toEqual([]);
    expect(r.passed).toBe(true);
  }, 1_800_000);

  it("the arm64 image's plugin, in its own file system (chroot: the image's loader and libraries only), passes", async () => {
    const r = await testPlugin(["chroot", rootfs, `/${ID}`]);
    expect(r.failed).toEqual([]);
    expect(r.passed).toBe(true);
  }, 1_800_000);
});

describe.skipIf(!gate.ok)("the build on Node 22 and 24", () => {
  it.each(["22", "24"])("on Node %s, with no --node, fetches the newest Node 26 from the registry and builds a working executable", async (line) => {
    const out = join(ROOT, `test/runtimes/.bin/ship-node${line}`);
    const r = await runForExit(join(ROOT, "scripts/with-node.sh"), ["--line", line, "node", ...NRI_WIRE.slice(1), "build", PLUGIN.entry, "--name", PLUGIN.name, "--idx", PLUGIN.idx, "--out", out], 1_200_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(/^build: engine node v26\.\d+\.\d+ for linux\/\w+ \(node-linux-\w+@26\.\d+\.\d+ from the npm registry; stripped /);
    const check = await runForExit(join(out, ID), ["check"]);
    expect(check.stdout.trim()).toBe('{"id":"10-adjuster","events":"CreateContainer","handlers":["configure","createContainer"]}');
  }, 1_200_000);
});

describe.skipIf(!gate.ok)("the chart and the DaemonSet", () => {
  let helm = "";
  let decoder = "";
  let image!: Shipped;
  beforeAll(async () => {
    const b = await build(["helm", "node", "qemu"]);
    helm = b.HELM!;
    decoder = join(ROOT, "test/runtimes/.bin/k8s-decode");
    await run("go", ["-C", join(ROOT, "test/ship/k8s-decode"), "build", "-o", decoder, "."], "go build k8s-decode", join(ROOT, "test/ship/k8s-decode"), 600_000);
    image = await ship(b);
  }, 3_600_000);

  const decode = async (file: string): Promise<string[]> => {
    const r = await runForExit(decoder, [file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return r.stdout.trim().split("\n");
  };
  const template = (...set: string[]) => runForExit(helm, ["template", "nri-plugin-adjuster", join(OUT, "chart"), "--namespace", "kube-system", ...set.flatMap((s) => ["--set", s])]);

  it("helm lint passes and helm template renders objects that decode strictly into the Kubernetes API types, with the values applied", async () => {
    const chart = join(OUT, "chart");
    const lint = await runForExit(helm, ["lint", chart]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    const r = await template("config=hello", "nri.plugin.index=20", "nri.socketPath=/run/containerd/nri/plugins.sock", "podSecurityContext.seLinuxOptions.type=spc_t", `image.digest=${image.digest}`);
    expect(r.code, r.stderr).toBe(0);
    const rendered = join(OUT, "rendered.yaml");
    writeFileSync(rendered, r.stdout);
    expect(await decode(rendered)).toEqual(["ConfigMap kube-system/nri-plugin-adjuster-config", "DaemonSet kube-system/nri-plugin-adjuster"]);
    const text = r.stdout;
    expect(text).toContain('config: "hello"');
    expect(text).toContain('- --idx\n            - "20"');
    expect(text).toContain("- --socket\n            - /var/run/nri/plugins.sock");
    expect(text).toContain("hostPath:\n            path: /run/containerd/nri\n");
    expect(text).toContain(`image: "${image.imageRef}@${image.digest}"`);
    expect(text).toContain("securityContext:\n        seLinuxOptions:\n          type: spc_t\n        seccompProfile:\n          type: RuntimeDefault\n");
    expect(text).toContain("automountServiceAccountToken: false");
  }, 300_000);

  it("by default: the image by tag, the default socket, the runtime's seccomp profile and no SELinux options", async () => {
    const r = await template();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`image: "${image.imageRef}"`);
    expect(r.stdout).toContain("- --socket\n            - /var/run/nri/nri.sock");
    expect(r.stdout).toContain("securityContext:\n        seccompProfile:\n          type: RuntimeDefault\n      terminationGracePeriodSeconds");
  });

  it("a socket path that is not absolute, or is in /, fails the render with the value named", async () => {
    for (const bad of ["nri.sock", "/nri.sock", "/var/run/nri/"]) {
      const r = await template(`nri.socketPath=${bad}`);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`nri.socketPath "${bad}": must be the absolute path of a socket in a directory other than /`);
    }
  });

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
