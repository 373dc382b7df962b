import { mkdirSync, writeFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { dirname, join } from "node:path";
import { containerd } from "../runtimes/containerd.js";
import { NRI_SOCKET, type RunningRuntime } from "../runtimes/runtime.js";
import { type Built, freePort, mountsUnder, readText, removeWorkDir, run, type Started, startLogged, stop } from "../runtimes/support.js";
import { type HostState, recordHostState, restoreHostState } from "./host-state.js";
import { KubeApi } from "./kube-api.js";
import { generatePki, type Pki } from "./pki.js";

/** The node's name: one node, named for the suite rather than the host. */
export const NODE = "nri-wire-node";

/** The host's first non-loopback IPv4 address: the kubelet refuses a loopback node IP. */
export function nodeIp(): string {
  for (const addrs of Object.values(networkInterfaces()))
    for (const a of addrs ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  throw new Error("cluster: the host has no non-loopback IPv4 address for the node");
}

/** The kubelet's configuration: cgroupfs (the runtime's driver), the runtime's socket, private directories. */
function kubeletConfig(o: { dir: string; pki: Pki; endpoint: string; port: number; ip: string; cgroupV1: boolean }): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${o.ip}
port: ${o.port}
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ${o.pki.caCert}
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
failCgroupV1: ${!o.cgroupV1}
containerRuntimeEndpoint: ${o.endpoint}
failSwapOn: false
podLogsDir: ${o.dir}/pod-logs
volumePluginDir: ${o.dir}/volume-plugins
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
evictionHard:
  memory.available: "50Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
`;
}

/** Where a cluster keeps its state (removed at the end) and its logs (kept). */
export interface ClusterPlace {
  readonly dir: string;
  readonly logs: string;
}

/**
 * A single-node Kubernetes cluster for one run: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and a kubelet on a private containerd with NRI enabled. Host networking only:
 * no network plugin; containerd is given a network config whose plugin does not exist, so a pod
 * that is not hostNetwork fails visibly instead of getting a network. Every directory is under
 * `dir`; `stop()` stops everything and puts the host back.
 */
export class Cluster {
  private readonly procs: { name: string; p: Started }[] = [];
  private runtime: RunningRuntime | undefined;
  private runtimeStarts = 0;
  private host: HostState | undefined;
  api!: KubeApi;
  pki!: Pki;
  /** https://127.0.0.1:<port> */
  server = "";
  /** The directory the runtime's NRI socket is in: what a plugin's DaemonSet mounts. */
  readonly nriDir: string;
  readonly containerdDir: string;

  private constructor(
    readonly built: Built,
    readonly place: ClusterPlace,
  ) {
    this.containerdDir = join(place.dir, "containerd");
    this.nriDir = dirname(join(this.containerdDir, NRI_SOCKET));
  }

  /** The runtime's NRI socket. */
  get nriSocket(): string {
    return join(this.nriDir, "nri.sock");
  }

  /** The runtime's log (the latest start's). */
  get runtimeLog(): string {
    return this.runtime?.log ?? "";
  }

  /** Starts a cluster; when any part fails to start, what started is stopped and the error thrown. */
  static async start(built: Built, place: ClusterPlace, cgroupV1: boolean): Promise<Cluster> {
    const c = new Cluster(built, place);
    try {
      await c.boot(cgroupV1);
    } catch (e) {
      const left = await c.stop();
      if (left.length > 0) (e as Error).message += `; left after stopping: ${left.join("; ")}`;
      throw e;
    }
    return c;
  }

  private spawn(name: string, cmd: string, args: readonly string[]): Started {
    const p = startLogged(cmd, args, join(this.place.logs, `${name}.log`));
    this.procs.push({ name, p });
    return p;
  }

  private async boot(cgroupV1: boolean): Promise<void> {
    const { dir } = this.place;
    const bin = this.built.KUBE_BIN!;
    this.host = recordHostState(containerd(this.built).hostPaths);
    const [etcdClient, etcdPeer, apiPort, kubeletPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const ip = nodeIp();
    this.server = `https://127.0.0.1:${apiPort}`;
    this.pki = generatePki(join(dir, "pki"), this.server, NODE, ["127.0.0.1", ip, "10.96.0.1"]);
    this.api = new KubeApi(this.server, this.pki.caCert, this.pki.admin.cert, this.pki.admin.key);

    const etcd = this.spawn("etcd", this.built.ETCD!, [
      "--name=node",
      `--data-dir=${dir}/etcd`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=node=http://127.0.0.1:${etcdPeer}`,
      "--log-level=warn",
    ]);
    const p = this.pki;
    const apiserver = this.spawn("kube-apiserver", join(bin, "kube-apiserver"), [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      "--bind-address=127.0.0.1",
      `--advertise-address=${ip}`,
      `--secure-port=${apiPort}`,
      `--cert-dir=${dir}/apiserver`,
      `--tls-cert-file=${p.apiserver.cert}`,
      `--tls-private-key-file=${p.apiserver.key}`,
      `--client-ca-file=${p.caCert}`,
      `--kubelet-client-certificate=${p.apiserverKubelet.cert}`,
      `--kubelet-client-key=${p.apiserverKubelet.key}`,
      "--kubelet-preferred-address-types=InternalIP",
      "--authorization-mode=Node,RBAC",
      "--service-cluster-ip-range=10.96.0.0/16",
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${p.serviceAccount.pub}`,
      `--service-account-signing-key-file=${p.serviceAccount.key}`,
      "--allow-privileged=true",
      "--enable-priority-and-fairness=false",
    ]);
    await this.until(async () => (await this.api.call<string>("GET", "/readyz")) === "ok", "start kube-apiserver: /readyz did not answer ok", 120_000, [etcd, apiserver]);

    this.spawn("kube-controller-manager", join(bin, "kube-controller-manager"), [
      `--kubeconfig=${p.controllerManager.kubeconfig}`,
      `--authentication-kubeconfig=${p.controllerManager.kubeconfig}`,
      `--authorization-kubeconfig=${p.controllerManager.kubeconfig}`,
      "--leader-elect=false",
      "--use-service-account-credentials=true",
      `--service-account-private-key-file=${p.serviceAccount.key}`,
      `--root-ca-file=${p.caCert}`,
      "--secure-port=0",
      "--controllers=*,-nodeipam",
    ]);
    this.spawn("kube-scheduler", join(bin, "kube-scheduler"), [
      `--kubeconfig=${p.scheduler.kubeconfig}`,
      `--authentication-kubeconfig=${p.scheduler.kubeconfig}`,
      `--authorization-kubeconfig=${p.scheduler.kubeconfig}`,
      "--leader-elect=false",
      "--secure-port=0",
    ]);

    // The runtime: the real-runtime suite's containerd, its NRI socket in a directory of its own.
    mkdirSync(join(this.containerdDir, "cni/net.d"), { recursive: true });
    writeFileSync(
      join(this.containerdDir, "cni/net.d/10-host-network-only.conflist"),
      JSON.stringify({ cniVersion: "1.0.0", name: "host-network-only", plugins: [{ type: "nri-wire-host-network-only" }] }),
    );
    await this.startRuntime();

    const kubeletDir = join(dir, "kubelet");
    mkdirSync(kubeletDir, { recursive: true });
    const config = join(dir, "kubelet-config.yaml");
    writeFileSync(config, kubeletConfig({ dir, pki: p, endpoint: this.runtime!.endpoint, port: kubeletPort, ip, cgroupV1 }));
    const kubelet = this.spawn("kubelet", join(bin, "kubelet"), [
      `--config=${config}`,
      `--kubeconfig=${p.kubelet.kubeconfig}`,
      `--root-dir=${kubeletDir}`,
      `--cert-dir=${kubeletDir}/pki`,
      `--hostname-override=${NODE}`,
      `--node-ip=${ip}`,
      "--v=2",
    ]);
    await this.until(async () => conditionTrue(await this.api.get(`/api/v1/nodes/${NODE}`), "Ready"), `start kubelet: node ${NODE} did not become Ready`, 180_000, [etcd, apiserver, kubelet]);
    // Pods are admitted once their namespace's default service account exists.
    await this.api.waitFor("/api/v1/namespaces/default/serviceaccounts", "fieldSelector=metadata.name=default", () => true, "the default service account was not created", 60_000);
  }

  /** Polls `cond` (an API call that may fail while a component starts) until it holds. */
  private async until(cond: () => Promise<boolean>, what: string, timeoutMs: number, watched: Started[]): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ok = await cond().catch(() => false);
      if (ok) return;
      const gone = watched.find((w) => w.done());
      if (gone !== undefined) throw new Error(`cluster: ${what}: ${gone.log} ended; its last lines: ${readText(gone.log).split("\n").filter((l) => l !== "").slice(-5).join(" | ")}`);
      if (Date.now() > deadline) throw new Error(`cluster: ${what} (waited ${timeoutMs} ms); logs: ${this.place.logs}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Starts (again) the runtime, with the probe image (the sandbox image) imported. */
  async startRuntime(): Promise<void> {
    this.runtimeStarts++;
    this.runtime = await containerd(this.built).start({ dir: this.containerdDir, logs: this.place.logs }, this.runtimeStarts);
  }

  /** Stops the runtime by its PID (pods and containers keep running under their shims). */
  async stopRuntime(): Promise<void> {
    await this.runtime?.stop();
    this.runtime = undefined;
  }

  /** `ctr` against the runtime, in the k8s.io namespace. */
  ctr(...args: string[]): Promise<string> {
    return run(join(this.built.CONTAINERD_BIN!, "ctr"), ["--address", join(this.containerdDir, "containerd.sock"), "-n", "k8s.io", ...args], `ctr ${args.slice(0, 2).join(" ")}`, this.runtimeLog, 120_000);
  }

  /** `crictl` against the runtime. */
  crictl(...args: string[]): Promise<string> {
    return run(this.built.CRICTL!, ["--runtime-endpoint", `unix://${this.containerdDir}/containerd.sock`, "--timeout", "30s", ...args], `crictl ${args[0] ?? ""}`, this.runtimeLog, 60_000);
  }

  /** Imports an OCI archive into the runtime's k8s.io namespace. */
  async importImage(tar: string): Promise<void> {
    await this.ctr("images", "import", tar);
  }

  /** kubectl as cluster-admin. */
  kubectl(...args: string[]): Promise<string> {
    return run(join(this.built.KUBE_BIN!, "kubectl"), [`--kubeconfig=${this.pki.admin.kubeconfig}`, ...args], `kubectl ${args.slice(0, 2).join(" ")}`, join(this.place.logs, "kubelet.log"), 120_000);
  }

  /** helm as cluster-admin, its own state and caches under the run's directory. */
  helm(...args: string[]): Promise<string> {
    const home = join(this.place.dir, "helm");
    return run(
      "env",
      [
        `HELM_CACHE_HOME=${home}/cache`,
        `HELM_CONFIG_HOME=${home}/config`,
        `HELM_DATA_HOME=${home}/data`,
        `KUBECONFIG=${this.pki.admin.kubeconfig}`,
        this.built.HELM!,
        ...args,
      ],
      `helm ${args[0] ?? ""}`,
      join(this.place.logs, "kubelet.log"),
      180_000,
    );
  }

  /**
   * Stops everything, in order: the controllers (nothing recreates pods), the kubelet, every pod
   * (through the runtime), the runtime, the API server, etcd; then unmounts what the kubelet
   * mounted, puts the host back and removes the directory. Returns what was left behind.
   */
  async stop(): Promise<string[]> {
    const left: string[] = [];
    const byName = (n: string) => this.procs.filter((x) => x.name === n).map((x) => x.p);
    for (const n of ["kube-controller-manager", "kube-scheduler", "kubelet"]) for (const p of byName(n)) await stop(p);
    if (this.runtime !== undefined) {
      await this.crictl("rmp", "--force", "--all").catch((e: Error) => left.push(`pods: ${e.message}`));
      await this.stopRuntime();
    }
    for (const n of ["kube-apiserver", "etcd"]) for (const p of byName(n)) await stop(p);
    // The kubelet's volume mounts (tokens, config maps) and its own bind mounts are its state, not leaks.
    for (const m of mountsUnder(join(this.place.dir, "kubelet"))) await run("umount", ["-l", m], `umount ${m}`, "").catch(() => undefined);
    if (this.host !== undefined) left.push(...restoreHostState(this.host, this.place.dir));
    left.push(...(await removeWorkDir(this.place.dir)));
    return left;
  }
}

/** Whether an object's status has condition `type` with status True. */
export function conditionTrue(o: { status?: Record<string, unknown> }, type: string): boolean {
  const conds = (o.status?.conditions ?? []) as { type: string; status: string }[];
  return conds.some((c) => c.type === type && c.status === "True");
}
