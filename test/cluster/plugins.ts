import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Confinement } from "../runtimes/confinement.js";
import { type Built, NRI_WIRE, ROOT, runForExit } from "../runtimes/support.js";

/** The config both plugins read: environment variables and annotations to add, a pids limit to set. */
export interface PluginConfig {
  readonly env: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly pidsLimit: number;
}

/** A plugin the suite deploys with Helm: its chart takes `nri.socketPath` and `config` (the text of Configure). */
export interface DeployedPlugin {
  /** Go or TypeScript: the name the comparison prints. */
  readonly language: string;
  /** The Helm release (and the plugin's name as it registers). */
  readonly release: string;
  readonly namespace: string;
  readonly chart: string;
  /** The OCI archive of its image, imported into the runtime's k8s.io namespace. */
  readonly imageTar: string;
  /** More `helm install` arguments: what this chart offers beyond the common values. */
  readonly installArgs: readonly string[];
  /**
   * The image's name by tag and by digest, when the install pins the digest: an imported image
   * has only the first until it is given the second (`ctr images tag`), as docs/deployment.md says.
   */
  readonly pinned?: { readonly tagged: string; readonly digested: string };
  /** The memory its chart requests for the pod, in bytes. */
  readonly memoryRequest: number;
  /** What its running process's confinement must be, as its chart asks (/proc/PID/status). */
  readonly confinement: Partial<Confinement>;
}

/** A Kubernetes memory quantity (`96Mi`) in bytes: the binary suffixes charts use. */
export function memoryBytes(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (m === null) throw new Error(`cluster: memory quantity "${quantity}" is not NUMBER[Ki|Mi|Gi]`);
  return Number(m[1]) * { "": 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] ?? ""]!;
}

/** The memory request in a chart's values.yaml (resources.requests.memory). */
function memoryRequest(chart: string): number {
  const m = /^resources:\n(?:  .*\n)*?  requests:\n(?:    .*\n)*?    memory: (\S+)$/m.exec(readFileSync(join(chart, "values.yaml"), "utf8"));
  if (m === null) throw new Error(`cluster: ${chart}/values.yaml has no resources.requests.memory`);
  return memoryBytes(m[1]!);
}

/** The Go plugin (test/cluster/go-plugin) with its chart; scripts/cluster/build.sh builds the image its values name. */
export async function goPlugin(b: Built): Promise<DeployedPlugin> {
  if (b.GO_PLUGIN_IMAGE !== "localhost/nri-wire/go-env-injector:1") throw new Error(`cluster: the Go plugin's chart names localhost/nri-wire/go-env-injector:1, the build made ${b.GO_PLUGIN_IMAGE}`);
  const chart = join(ROOT, "test/cluster/go-plugin/chart");
  // Its chart asks for the runtime's seccomp profile, no more.
  return { language: "Go", release: "go-env-injector", namespace: "kube-system", chart, imageTar: b.GO_PLUGIN_IMAGE_TAR!, installArgs: [], memoryRequest: memoryRequest(chart), confinement: { seccomp: "2" } };
}

/**
 * The TypeScript twin, examples/env-injector.ts: `nri-wire build` writes its image and its chart,
 * installed pinned to the image's digest and with an SELinux type (which a node without SELinux
 * ignores) to run what the chart offers.
 */
export async function tsPlugin(b: Built): Promise<DeployedPlugin> {
  const out = join(ROOT, "test/cluster/.bin/ts-plugin");
  const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "build", join(ROOT, "examples/env-injector.ts"), "--name", "env-injector", "--idx", "50", "--out", out, "--node", b.NODE!], 600_000);
  if (r.code !== 0) throw new Error(`cluster: nri-wire build examples/env-injector.ts failed (${r.code}): ${r.stderr.trim()}`);
  const m = /\(([^@\s]+):([^@\s:]+)@(sha256:[0-9a-f]{64}), /.exec(r.stdout);
  if (m === null) throw new Error(`cluster: nri-wire build printed no image reference: ${r.stdout}`);
  const [, repository, tag, digest] = m as unknown as [string, string, string, string];
  const chart = join(out, "chart");
  return {
    language: "TypeScript",
    release: "env-injector",
    namespace: "kube-system",
    chart,
    imageTar: join(out, "env-injector.oci.tar"),
    installArgs: ["--set", `image.digest=${digest}`, "--set", "podSecurityContext.seLinuxOptions.type=spc_t"],
    pinned: { tagged: `${repository}:${tag}`, digested: `${repository}@${digest}` },
    memoryRequest: memoryRequest(chart),
    // A seccomp filter, no new privileges, no capability.
    confinement: { seccomp: "2", noNewPrivs: "1", capEff: "0000000000000000" },
  };
}
