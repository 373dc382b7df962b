import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Built, NRI_WIRE, ROOT, runForExit } from "../runtimes/support.js";

/** The config both plugins read: environment variables and annotations to add, a pids limit to set. */
export interface PluginConfig {
  readonly env: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly pidsLimit: number;
}

/** A plugin the suite deploys with Helm, and how its chart is given the values. */
export interface DeployedPlugin {
  /** Go or TypeScript: the name the comparison prints. */
  readonly language: string;
  /** The Helm release (and the plugin's name as it registers). */
  readonly release: string;
  readonly namespace: string;
  readonly chart: string;
  /** The OCI archive of its image, imported into the runtime's k8s.io namespace. */
  readonly imageTar: string;
  /** A values file for the chart: the node's NRI socket directory and `config`. */
  values(dir: string, nriDir: string, config: PluginConfig): string;
}

/** The Go plugin (test/cluster/go-plugin) with its chart, both from scripts/cluster/build.sh. */
export async function goPlugin(b: Built): Promise<DeployedPlugin> {
  return {
    language: "Go",
    release: "go-env-injector",
    namespace: "kube-system",
    chart: join(ROOT, "test/cluster/go-plugin/chart"),
    imageTar: b.GO_PLUGIN_IMAGE_TAR!,
    values(dir, nriDir, config) {
      const [repository, tag] = b.GO_PLUGIN_IMAGE!.split(/:(?=[^:]*$)/u);
      const file = join(dir, `go-values-${config.pidsLimit}.json`);
      writeFileSync(file, JSON.stringify({ image: { repository, tag }, nri: { socketDir: nriDir }, config: JSON.stringify(config) }));
      return file;
    },
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
    values(dir, nriDir, config) {
      const file = join(dir, `ts-values-${config.pidsLimit}.json`);
      writeFileSync(file, JSON.stringify({ nri: { socketDir: nriDir }, config: JSON.stringify(config) }));
      return file;
    },
  };
}
