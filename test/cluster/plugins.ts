import { join } from "node:path";
import { type Built, NRI_WIRE, ROOT, runForExit } from "../runtimes/support.js";

/** The config both plugins read: environment variables and annotations to add, a pids limit to set. */
export interface PluginConfig {
  readonly env: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly pidsLimit: number;
}

/** A plugin the suite deploys with Helm: its chart takes `nri.socketDir` and `config` (the text of Configure). */
export interface DeployedPlugin {
  /** Go or TypeScript: the name the comparison prints. */
  readonly language: string;
  /** The Helm release (and the plugin's name as it registers). */
  readonly release: string;
  readonly namespace: string;
  readonly chart: string;
  /** The OCI archive of its image, imported into the runtime's k8s.io namespace. */
  readonly imageTar: string;
}

/** The Go plugin (test/cluster/go-plugin) with its chart; scripts/cluster/build.sh builds the image its values name. */
export async function goPlugin(b: Built): Promise<DeployedPlugin> {
  if (b.GO_PLUGIN_IMAGE !== "localhost/nri-wire/go-env-injector:1") throw new Error(`cluster: the Go plugin's chart names localhost/nri-wire/go-env-injector:1, the build made ${b.GO_PLUGIN_IMAGE}`);
  return {
    language: "Go",
    release: "go-env-injector",
    namespace: "kube-system",
    chart: join(ROOT, "test/cluster/go-plugin/chart"),
    imageTar: b.GO_PLUGIN_IMAGE_TAR!,
  };
}

/** The TypeScript twin, examples/env-injector.ts: `nri-wire build` writes its image and its chart. */
export async function tsPlugin(b: Built): Promise<DeployedPlugin> {
  const out = join(ROOT, "test/cluster/.bin/ts-plugin");
  const r = await runForExit(NRI_WIRE[0]!, [...NRI_WIRE.slice(1), "build", join(ROOT, "examples/env-injector.ts"), "--name", "env-injector", "--idx", "50", "--out", out, "--node", b.NODE!], 600_000);
  if (r.code !== 0) throw new Error(`cluster: nri-wire build examples/env-injector.ts failed (${r.code}): ${r.stderr.trim()}`);
  return {
    language: "TypeScript",
    release: "env-injector",
    namespace: "kube-system",
    chart: join(out, "chart"),
    imageTar: join(out, "env-injector.oci.tar"),
  };
}
