import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { viaStateChange } from "../support/lifecycle-events.js";
import { LIFECYCLE_EVENTS } from "./lifecycle.js";
import { installPlugin, NRI_SOCKET, NRI_TIMEOUTS, pluginFiles, type RunningRuntime, type RuntimeUnderTest } from "./runtime.js";
import { type Built, run, runForExit, startLogged, stop, waitUntil } from "./support.js";

/**
 * The lifecycle events CRI-O v1.34 sends, in order, for one pod and one container: no
 * ValidateContainerAdjustment and no PostUpdatePodSandbox.
 */
const EVENTS = LIFECYCLE_EVENTS.filter((e) => e !== "ValidateContainerAdjustment" && e !== "PostUpdatePodSandbox");

/** The config of a private CRI-O: its own storage, sockets, state and NRI directories. */
export function crioConfig(dir: string, bin: string, image: string, runc: string, conmon: string, registrationS: number = NRI_TIMEOUTS.registrationS): string {
  return `[crio]
root = "${dir}/storage"
runroot = "${dir}/runroot"
storage_driver = "vfs"
log_dir = "${dir}/pod-logs"
version_file = "${dir}/version"
version_file_persist = "${dir}/version-persist"
clean_shutdown_file = "${dir}/clean.shutdown"

[crio.api]
listen = "${dir}/crio.sock"
stream_address = "127.0.0.1"
stream_port = "0"

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "cgroupfs"
conmon_cgroup = "pod"
# No infra container: this kind of machine refuses the infra container's oom_score_adj.
drop_infra_ctr = true
pinns_path = "${bin}/pinns"
namespaces_dir = "${dir}/ns"
container_exits_dir = "${dir}/exits"
container_attach_socket_dir = "${dir}/attach"
hooks_dir = ["${dir}/hooks"]
cdi_spec_dirs = ["${dir}/cdi"]
# No iptables here.
disable_hostport_mapping = true

[crio.runtime.runtimes.runc]
runtime_path = "${runc}"
runtime_root = "${dir}/runc"
monitor_path = "${conmon}"

[crio.image]
pause_image = "${image}"
signature_policy = "${dir}/policy.json"
signature_policy_dir = "${dir}/policies"

[crio.network]
network_dir = "${dir}/cni/net.d"
plugin_dirs = ["${dir}/cni/bin"]

[crio.nri]
enable_nri = true
nri_listen = "${dir}/nri-socket/nri.sock"
nri_plugin_dir = "${dir}/nri/plugins"
nri_plugin_config_dir = "${dir}/nri/conf.d"
nri_plugin_registration_timeout = "${registrationS}s"
nri_plugin_request_timeout = "${NRI_TIMEOUTS.requestS}s"
`;
}

/** CRI-O v1.34.0 with NRI enabled; its images come from an OCI archive copied into its storage. */
export function crio(b: Built): RuntimeUnderTest {
  let imported = false;
  return {
    name: "cri-o",
    // CRI-O sends no NRI version; the plugin infers it from "cri-o" 1.34.0, as the Go stub does.
    configure: { runtime: "cri-o", nriVersion: "v0.9.1-0.20250219030224-e597e7849f24" },
    events: () => [...EVENTS],
    deprecationWarnings: () => [],
    // NRI v0.9.1 has a call of its own only for the events that answer; the rest go as StateChange.
    viaStateChange: () => viaStateChange(EVENTS),
    refusedCalls: () => [],
    // NRI v0.9.1: the old events always as StateChange, no deprecation.
    dialect: "statechange",
    // Logged as "failed to start external plugin: …" (socket) or "failed to start pre-installed NRI plugin …: …" (fd).
    refusal: (p) => (p.validates ? "invalid plugin events: 0x2000" : undefined),
    // Created by containers/image's blob info cache and CRI-O's default policy directory.
    hostPaths: ["/var/lib/containers", "/etc/crio"],
    async start({ dir, logs, registry, registrationS }, n, preinstalled) {
      const bin = b.CRIO_BIN!;
      const config = join(dir, "crio.conf");
      writeFileSync(config, crioConfig(dir, bin, b.IMAGE!, b.RUNC!, b.CONMON!, registrationS));
      writeFileSync(join(dir, "policy.json"), `{"default":[{"type":"insecureAcceptAnything"}]}\n`);
      const insecure = registry === undefined ? "" : `\n[[registry]]\nlocation = "${registry}"\ninsecure = true\n`;
      writeFileSync(join(dir, "registries.conf"), `unqualified-search-registries = []\n${insecure}`);
      writeFileSync(join(dir, "storage.conf"), `[storage]\ndriver = "vfs"\ngraphroot = "${dir}/storage"\nrunroot = "${dir}/runroot"\n`);
      rmSync(join(dir, "nri"), { recursive: true, force: true });
      mkdirSync(join(dir, "nri/conf.d"), { recursive: true });
      mkdirSync(join(dir, "nri/plugins"), { recursive: true });
      mkdirSync(join(dir, "nri-socket"), { recursive: true });
      if (typeof preinstalled === "function") preinstalled(join(dir, "nri/plugins"), join(dir, "nri/conf.d"));
      else if (preinstalled) installPlugin(join(dir, "nri/plugins"), preinstalled, pluginFiles(logs, n));
      const log = join(logs, `crio-${n}.log`);
      const env = { ...process.env, CONTAINERS_REGISTRIES_CONF: join(dir, "registries.conf"), CONTAINERS_STORAGE_CONF: join(dir, "storage.conf") };
      if (!imported) {
        // No registry: the image goes into CRI-O's storage before CRI-O holds its lock.
        await run(join(bin, "copyimg"), ["--root", join(dir, "storage"), "--runroot", join(dir, "runroot"), "--storage-driver", "vfs", "--signature-policy", join(dir, "policy.json"), "--image-name", b.IMAGE!, "--import-from", `oci-archive:${b.IMAGE_TAR!}`], "copyimg (image into CRI-O's storage)", log);
        imported = true;
      }
      const proc = startLogged(join(bin, "crio"), ["--config", config, "--config-dir", "", "--log-level", "info"], log, env);
      const running: RunningRuntime = {
        endpoint: `unix://${dir}/crio.sock`,
        nriSocket: join(dir, NRI_SOCKET),
        log,
        deprecations: () => Promise.resolve([]),
        stop: () => stop(proc),
      };
      try {
        await waitUntil(() => existsSync(join(dir, "crio.sock")) && existsSync(join(dir, NRI_SOCKET)), "start crio: no CRI and NRI sockets", 60_000, () => `; exited: ${proc.done()}; log: ${log}`);
        // CRI-O serves CRI only once its pre-installed plugins have registered or timed out (one
        // emulated by qemu-user takes seconds): until then the socket accepts but never answers.
        const waitMs = ((registrationS ?? NRI_TIMEOUTS.registrationS) + 60) * 1000;
        const deadline = Date.now() + waitMs;
        for (;;) {
          const r = await runForExit(b.CRICTL!, ["--runtime-endpoint", running.endpoint, "version"]);
          if (r.code === 0) break;
          if (Date.now() > deadline || proc.done()) throw new Error(`runtimes: start crio: CRI does not answer (waited ${waitMs} ms): ${r.stderr.trim()}; exited: ${proc.done()}; log: ${log}`);
          await new Promise((res) => setTimeout(res, 200));
        }
      } catch (e) {
        await running.stop();
        throw e;
      }
      return running;
    },
  };
}
