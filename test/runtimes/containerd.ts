import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { viaStateChange } from "../support/lifecycle-events.js";
import { LIFECYCLE_EVENTS } from "./lifecycle.js";
import type { PluginUnderTest } from "./plugins.js";
import { installPlugin, NRI_SOCKET, NRI_TIMEOUTS, pluginFiles, type RunningRuntime, type RuntimeUnderTest } from "./runtime.js";
import { type Built, overlayWorks, readText, run, startLogged, stop, waitUntil } from "./support.js";

/** The lifecycle events containerd v2.4 sends, in order, for one pod and one container: all of them. */
const EVENTS = LIFECYCLE_EVENTS;

/**
 * The config of a private containerd: its own root, state, sockets and NRI directories, and its
 * registry hosts (certs.d, where a plain-HTTP registry gets its hosts.toml).
 */
export function containerdConfig(dir: string, snapshotter: string, image: string, runc: string, registrationS: number = NRI_TIMEOUTS.registrationS): string {
  return `version = 4
root = "${dir}/root"
state = "${dir}/state"

[plugins."io.containerd.server.v1.grpc"]
  address = "${dir}/containerd.sock"

[plugins."io.containerd.server.v1.ttrpc"]
  address = "${dir}/containerd.sock.ttrpc"

[plugins."io.containerd.nri.v1.nri"]
  disable = false
  socket_path = "${dir}/nri-socket/nri.sock"
  plugin_path = "${dir}/nri/plugins"
  plugin_config_path = "${dir}/nri/conf.d"
  plugin_registration_timeout = "${registrationS}s"
  plugin_request_timeout = "${NRI_TIMEOUTS.requestS}s"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "${snapshotter}"
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "${dir}/certs.d"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${image}"

[plugins."io.containerd.cri.v1.runtime"]
  # Containers may not lower oom_score_adj below containerd's own on machines that refuse it.
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["${dir}/cni/bin"]
    conf_dir = "${dir}/cni/net.d"
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "${runc}"
        Root = "${dir}/runc"
`;
}

/** containerd v2.4.2 with the CRI plugin and NRI enabled. */
export function containerd(b: Built): RuntimeUnderTest {
  let snapshotter: string | undefined;
  return {
    name: "containerd",
    configure: { runtime: "containerd", nriVersion: "v0.12.3" },
    events: () => [...EVENTS],
    deprecationWarnings: (p) => (p.stateChangeOnly ? viaStateChange(EVENTS) : []),
    // It falls back to StateChange exactly where it warns.
    viaStateChange: (p) => (p.stateChangeOnly ? viaStateChange(EVENTS) : []),
    // Only the first: one UNIMPLEMENTED and it sends every old event to that plugin as StateChange.
    refusedCalls: (p) => (p.stateChangeOnly ? viaStateChange(EVENTS).slice(0, 1) : []),
    // NRI v0.12.3: v1alpha1 only, dedicated calls first, StateChange on UNIMPLEMENTED with a deprecation.
    dialect: "v1alpha1",
    refusal: () => undefined,
    // The shims' socket directory is fixed.
    hostPaths: ["/run/containerd"],
    async start({ dir, logs, registry, registrationS }, n, preinstalled) {
      const bin = b.CONTAINERD_BIN!;
      snapshotter ??= overlayWorks(dir) ? "overlayfs" : "native";
      const config = join(dir, "config.toml");
      writeFileSync(config, containerdConfig(dir, snapshotter, b.IMAGE!, b.RUNC!, registrationS));
      if (registry !== undefined) {
        mkdirSync(join(dir, "certs.d", registry), { recursive: true });
        writeFileSync(join(dir, "certs.d", registry, "hosts.toml"), `server = "http://${registry}"\n\n[host."http://${registry}"]\n  capabilities = ["pull", "resolve"]\n`);
      }
      rmSync(join(dir, "nri"), { recursive: true, force: true });
      mkdirSync(join(dir, "nri/conf.d"), { recursive: true });
      mkdirSync(join(dir, "nri/plugins"), { recursive: true });
      mkdirSync(join(dir, "nri-socket"), { recursive: true });
      if (typeof preinstalled === "function") preinstalled(join(dir, "nri/plugins"), join(dir, "nri/conf.d"));
      else if (preinstalled) installPlugin(join(dir, "nri/plugins"), preinstalled, pluginFiles(logs, n));
      const log = join(logs, `containerd-${n}.log`);
      // The shim is found on PATH.
      const proc = startLogged(join(bin, "containerd"), ["--config", config, "--log-level", "info"], log, { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` });
      const ctr = (step: string, ...args: string[]) => run(join(bin, "ctr"), ["--address", join(dir, "containerd.sock"), ...args], `ctr ${step}`, log);
      const running: RunningRuntime = {
        endpoint: `unix://${dir}/containerd.sock`,
        nriSocket: join(dir, NRI_SOCKET),
        log,
        async deprecations() {
          const out = await ctr("deprecations list", "deprecations", "list", "--format", "json");
          return (JSON.parse(out) as { id: string }[] | null ?? []).map((d) => d.id);
        },
        stop: () => stop(proc),
      };
      try {
        await waitUntil(() => readText(log).includes("containerd successfully booted"), "start containerd: it did not report being booted", 60_000, () => `; exited: ${proc.done()}; log: ${log}`);
        await ctr("images import", "-n", "k8s.io", "images", "import", b.IMAGE_TAR!);
      } catch (e) {
        await running.stop();
        throw e;
      }
      return running;
    },
  };
}
