import { describe, expect, it } from "vitest";
import {
  ContainerAdjustmentSchema,
  ContainerUpdateSchema,
  IOPrioClass,
  LinuxSchedulerFlag,
  LinuxSchedulerPolicy,
  MpolFlag,
  MpolMode,
} from "../../gen/v1beta1/api_pb.js";
import { AdjustmentBuilder, NriPlugin, UpdateBuilder, eviction } from "../../src/plugin/index.js";
import { drive, exampleCommand, expected, goMessage } from "./drive.js";
import { runPeer } from "./support.js";
import { nriPeer, useGoPeers } from "../support/go-peers.js";
import { SLOW_START_TEST_MS } from "../support/slow-start.js";

/**
 * The example plugins of examples/, each run against the Go runtime (pkg/adaptation v0.12.5,
 * dedicated calls, and v0.11.0, StateChange era) through `nri-peer drive`, which prints the
 * runtime's merged answers whole; the adjustments are checked field by field.
 */

const { hasGo, bin: go } = useGoPeers({ "v0.12.5": nriPeer("nri-peer-drive", "v0.12.5"), "v0.11.0": nriPeer("nri-peer-drive", "v0.11.0") });

const ERAS = ["v0.12.5", "v0.11.0"] as const;
const CTR = "demo-ctr";

/** Runs example `name` with `args` against the drive's socket. */
function example(name: string, args: string[] = []) {
  return (socket: string) => runPeer(exampleCommand(name), ["--socket", socket, ...args]);
}

describe.each(ERAS)("examples against the Go runtime %s", { timeout: SLOW_START_TEST_MS }, (era) => {
  it.skipIf(!hasGo)("logger: sees every event of the script, with pod and container names", async () => {
    let plugin: Awaited<ReturnType<ReturnType<typeof example>>> | undefined;
    const d = await drive(go[era], {}, async (s) => (plugin = await example("logger")(s)));
    expect(d.code, d.stderr).toBe(0);
    const events = plugin!.lines.map((l) => JSON.parse(l) as { event: string; pod?: string; container?: string; pods?: string[] });
    expect(events[0]).toEqual({ event: "Synchronize", pods: ["sync-pod"], containers: ["sync-ctr"] });
    // The runtime asks validators about CreateContainer's adjustment right after it.
    const script = d.lines.flatMap((l) => (l.event === undefined ? [] : l.event === "CreateContainer" ? [l.event, "ValidateContainerAdjustment"] : [l.event]));
    expect(events.slice(1).map((e) => e.event)).toEqual(script);
    expect(events.slice(1).every((e) => e.pod === "demo-pod" && e.container === (e.event.endsWith("PodSandbox") ? "" : CTR))).toBe(true);
  });

  it.skipIf(!hasGo)("device-injector: devices, CDI devices and mounts from the pod's annotations", async () => {
    const podAnnotations = {
      [`devices.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ path: "/dev/nri-null", type: "c", major: 1, minor: 3, fileMode: 0o666, uid: 0, gid: 0 }]),
      [`cdi-devices.nri-wire.dev/container.${CTR}`]: JSON.stringify(["vendor.com/device=one"]),
      [`mounts.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ source: "/var/lib/shared/data", destination: "/data", type: "bind", options: ["rbind", "ro"] }]),
      "devices.nri-wire.dev/container.other": JSON.stringify([{ path: "/dev/other", type: "c", major: 9, minor: 9 }]),
    };
    const d = await drive(go[era], { podAnnotations }, example("device-injector"));
    expect(d.code, d.stderr).toBe(0);
    expect(goMessage(ContainerAdjustmentSchema, d.event("CreateContainer").adjust)).toEqual(
      expected(ContainerAdjustmentSchema, {
        linux: { devices: [{ path: "/dev/nri-null", type: "c", major: 1n, minor: 3n, fileMode: { value: 0o666 }, uid: { value: 0 }, gid: { value: 0 } }] },
        CDIDevices: [{ name: "vendor.com/device=one" }],
        mounts: [{ source: "/var/lib/shared/data", destination: "/data", type: "bind", options: ["rbind", "ro"] }],
      }),
    );
  });

  it.skipIf(!hasGo)("ulimit-adjuster: rlimits from the annotation; a bad one fails the container with its own message", async () => {
    const ok = await drive(go[era], { podAnnotations: { [`ulimits.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ type: "nofile", hard: 4096, soft: 1024 }, { type: "RLIMIT_NPROC", hard: 2 ** 40, soft: 100 }]) } }, example("ulimit-adjuster"));
    expect(ok.code, ok.stderr).toBe(0);
    expect(goMessage(ContainerAdjustmentSchema, ok.event("CreateContainer").adjust)).toEqual(
      expected(ContainerAdjustmentSchema, { rlimits: [{ type: "RLIMIT_NOFILE", hard: 4096n, soft: 1024n }, { type: "RLIMIT_NPROC", hard: 2n ** 40n, soft: 100n }] }),
    );
    const bad = await drive(go[era], { podAnnotations: { [`ulimits.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ type: "nofiles", hard: 1, soft: 1 }]) } }, example("ulimit-adjuster"));
    expect(bad.code).toBe(1);
    expect(bad.event("CreateContainer")).toMatchObject({ ok: false, error: expect.stringContaining('ulimit-adjuster: unknown rlimit type "nofiles"') });
  });

  it.skipIf(!hasGo)("memory-capper: caps running containers through Synchronize, then re-shares the budget with an unsolicited update", async () => {
    const d = await drive(go[era], { updates: 1 }, example("memory-capper", ["--budget", String(2 ** 31)]));
    expect(d.code, d.stderr).toBe(0);
    const sync = d.lines.find((l) => l.synchronize !== undefined)!.synchronize!;
    expect(sync.map((u) => goMessage(ContainerUpdateSchema, u))).toEqual([expected(ContainerUpdateSchema, { containerId: "ctr0", linux: { resources: { memory: { limit: { value: 2n ** 31n } } } } })]);
    const unsolicited = d.lines.find((l) => l.unsolicited !== undefined)!.unsolicited!;
    expect(unsolicited.map((u) => goMessage(ContainerUpdateSchema, u))).toEqual(
      ["ctr0", "ctr1"].map((id) => expected(ContainerUpdateSchema, { containerId: id, linux: { resources: { memory: { limit: { value: 2n ** 30n } } } } })),
    );
  });

  it.skipIf(!hasGo)("validator: refuses another plugin's device with its own message; allows what it allows", async () => {
    const podAnnotations = { [`devices.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ path: "/dev/kmsg", type: "c", major: 1, minor: 11 }]) };
    const refused = await drive(go[era], { plugins: 2, podAnnotations }, (s) => Promise.all([example("device-injector")(s), example("validator")(s)]));
    expect(refused.event("CreateContainer")).toMatchObject({ ok: false, error: expect.stringContaining("validator: device /dev/kmsg is not allowed for container demo-ctr") });
    const allowed = await drive(go[era], { plugins: 2, podAnnotations }, (s) => Promise.all([example("device-injector")(s), example("validator", ["--allow", "/dev/null,/dev/kmsg"])(s)]));
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(goMessage(ContainerAdjustmentSchema, allowed.event("CreateContainer").adjust)).toEqual(
      expected(ContainerAdjustmentSchema, { linux: { devices: [{ path: "/dev/kmsg", type: "c", major: 1n, minor: 11n }] } }),
    );
  });

  it.skipIf(!hasGo)("several plugins in one process: three connections, their adjustments merged", async () => {
    const podAnnotations = {
      [`devices.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ path: "/dev/null", type: "c", major: 1, minor: 3 }]),
      [`ulimits.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ type: "nofile", hard: 10, soft: 10 }]),
    };
    let plugin: Awaited<ReturnType<ReturnType<typeof example>>> | undefined;
    const d = await drive(go[era], { plugins: 3, podAnnotations }, async (s) => (plugin = await example("several-plugins")(s)));
    expect(d.code, d.stderr).toBe(0);
    expect(plugin!.code).toBe(0);
    expect(plugin!.lines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(["Synchronize", "CreateContainer", "StartContainer", "RemoveContainer"]);
    expect(goMessage(ContainerAdjustmentSchema, d.event("CreateContainer").adjust)).toEqual(
      expected(ContainerAdjustmentSchema, { linux: { devices: [{ path: "/dev/null", type: "c", major: 1n, minor: 3n }] }, rlimits: [{ type: "RLIMIT_NOFILE", hard: 10n, soft: 10n }] }),
    );
  });
});

describe("an older runtime that sends no NRI version (Go runtime v0.11.0 taken for older releases)", { timeout: SLOW_START_TEST_MS }, () => {
  it.skipIf(!hasGo)("as cri-o v1.32.0 (NRI v0.9.0): the logger leaves out the three newer events, says so, and gets the rest as StateChange", async () => {
    let plugin: Awaited<ReturnType<ReturnType<typeof example>>> | undefined;
    const d = await drive(go["v0.11.0"]!, { runtimeName: "cri-o", runtimeVersion: "v1.32.0" }, async (s) => (plugin = await example("logger")(s)));
    expect(d.code, d.stderr).toBe(0);
    expect(plugin!.stderr).toContain(
      "nri: plugin 00-logger: not subscribing to UpdatePodSandbox,PostUpdatePodSandbox,ValidateContainerAdjustment (0x3800): runtime cri-o v1.32.0 has NRI v0.9.0 (inferred), which does not know them",
    );
    const events = plugin!.lines.map((l) => (JSON.parse(l) as { event: string }).event);
    expect(events.slice(1)).toEqual(d.lines.flatMap((l) => (l.event === undefined ? [] : [l.event])));
  });

  it.skipIf(!hasGo)("as containerd v2.2.1 (NRI v0.11.0): every event is subscribed, validation included", async () => {
    let plugin: Awaited<ReturnType<ReturnType<typeof example>>> | undefined;
    const d = await drive(go["v0.11.0"]!, { runtimeName: "containerd", runtimeVersion: "v2.2.1" }, async (s) => (plugin = await example("logger")(s)));
    expect(d.code, d.stderr).toBe(0);
    expect(plugin!.stderr).not.toContain("not subscribing");
    expect(plugin!.lines.map((l) => (JSON.parse(l) as { event: string }).event)).toContain("ValidateContainerAdjustment");
  });
});

/**
 * Every adjustment kind, built with the helpers: numbers for 64-bit fields, removals as methods.
 * `merged` is the same adjustment as the Go runtime reports it after merging: it applies the
 * removal of env A and of a device the container does not have without a trace, takes the empty
 * first argument of updateArgs as "override". (Before v0.12.5 the Go runtime filed a sysctl
 * removal under the annotations; v0.12.5 keeps it in sysctl, as built.)
 */
function everyKind(era: string, merged = false): AdjustmentBuilder {
  const a = new AdjustmentBuilder()
    .addAnnotation("nri-wire.dev/added", "yes")
    .removeAnnotation("nri-wire.dev/gone")
    .addMount({ source: "/var/lib/shared", destination: "/shared", type: "bind", options: ["rbind", "rw"] })
    .removeMount("/old")
    .addEnv("ADDED", "1");
  if (!merged) a.removeEnv("A").updateArgs(["sleep", "1"]).removeDevice("/dev/old");
  else a.setArgs(["sleep", "1"]);
  // NRI v0.11.0 crashes on any sysctl adjustment (it writes into a nil map of its reply).
  if (era !== "v0.11.0") {
    a.setLinuxSysctl("net.ipv4.ip_forward", "1");
    a.removeLinuxSysctl("net.core.somaxconn");
  }
  a
    .addHooks({ prestart: [{ path: "/bin/true", args: ["true"], env: ["X=1"], timeout: 5 }] })
    .addHook("poststop", { path: "/bin/false" })
    .addRlimit("RLIMIT_NOFILE", 4096, 1024)
    .addDevice({ path: "/dev/nri", type: "c", major: 10, minor: 200, fileMode: 0o600, uid: 1, gid: 2 })
    .addCDIDevice("vendor.com/gpu=0")
    .addOrReplaceNamespace({ type: "network", path: "/proc/1/ns/net" })
    .removeNamespace("ipc")
    .addLinuxNetDevice("eth9", { name: "net9" })
    .setLinuxMemoryLimit(2 ** 30)
    .setLinuxMemoryReservation(2 ** 29)
    .setLinuxMemorySwap(2 ** 31)
    .setLinuxMemoryKernel(2 ** 20)
    .setLinuxMemoryKernelTCP(2 ** 19)
    .setLinuxMemorySwappiness(10)
    .setLinuxMemoryDisableOomKiller()
    .setLinuxMemoryUseHierarchy()
    .setLinuxCPUShares(512)
    .setLinuxCPUQuota(50_000)
    .setLinuxCPUPeriod(100_000)
    .setLinuxCPURealtimeRuntime(1000)
    .setLinuxCPURealtimePeriod(2000)
    .setLinuxCPUSetCPUs("0-1")
    .setLinuxCPUSetMems("0")
    .setLinuxPidLimits(100)
    .addLinuxHugepageLimit("2MB", 2 ** 21)
    .setLinuxBlockIOClass("slow")
    .setLinuxRDTClass("gold")
    .addLinuxUnified("memory.high", "1000000")
    .setLinuxRDTClosID("clos1")
    .setLinuxRDTSchemata(["L3:0=f"])
    .setLinuxRDTEnableMonitoring(true)
    .setLinuxCgroupsPath("/nri/demo")
    .setLinuxOomScoreAdj(-500)
    .setLinuxIOPriority({ class: IOPrioClass.IOPRIO_CLASS_BE, priority: 4 })
    .setLinuxSeccompPolicy({ defaultAction: "SCMP_ACT_ALLOW", defaultErrno: 1, architectures: ["SCMP_ARCH_X86_64"], syscalls: [{ names: ["mkdir"], action: "SCMP_ACT_ERRNO", errnoRet: 2, args: [{ index: 0, value: 1, valueTwo: 2, op: "SCMP_CMP_EQ" }] }] })
    .setLinuxScheduler({ policy: LinuxSchedulerPolicy.SCHED_BATCH, nice: 5, priority: 0, flags: [LinuxSchedulerFlag.SCHED_FLAG_RESET_ON_FORK], runtime: 1, deadline: 2, period: 3 });
  // NRI v0.11.0 predates the memory policy field; it would drop it.
  if (era !== "v0.11.0") a.setLinuxMemoryPolicy(MpolMode.MPOL_BIND, "0", MpolFlag.MPOL_F_STATIC_NODES);
  return a;
}

/** Every resource a container update carries; `merged`: as the Go runtime reports it, which drops the pids limit of updates. */
function everyResource(id: string, merged = false): UpdateBuilder {
  const u = new UpdateBuilder(id);
  if (!merged) u.setLinuxPidLimits(64);
  return u
    .setLinuxMemoryLimit(2 ** 30)
    .setLinuxMemoryReservation(2 ** 29)
    .setLinuxMemorySwap(2 ** 31)
    .setLinuxMemorySwappiness(5)
    .setLinuxCPUShares(256)
    .setLinuxCPUQuota(-1)
    .setLinuxCPUPeriod(100_000)
    .setLinuxCPUSetCPUs("1")
    .addLinuxHugepageLimit("1GB", 2 ** 30)
    .setLinuxBlockIOClass("fast")
    .setLinuxRDTClass("silver")
    .addLinuxUnified("cpu.weight", "50")
    .setIgnoreFailure();
}

describe.each(ERAS)("adjustment and update helpers against the Go runtime %s", { timeout: SLOW_START_TEST_MS }, (era) => {
  it.skipIf(!hasGo)("every adjustment kind and every update resource arrives as built", async () => {
    let plugin: NriPlugin | undefined;
    const d = await drive(go[era], {}, async (socket) => {
      plugin = new NriPlugin(
        {
          createContainer: () => ({ adjust: everyKind(era).build(), evict: [eviction("ctr0", "making room")] }),
          updateContainer: (req) => ({ update: [everyResource(req.container?.id ?? "").build()], evict: [{ containerId: "ctr0", reason: "still too big" }] }),
          stopContainer: () => ({ update: [{ containerId: "ctr0", linux: { resources: { cpu: { shares: 2 } } } }] }),
        },
        { socketPath: socket, name: "helpers", idx: "10", env: {} },
      );
      await plugin.start();
    });
    expect(d.code, d.stderr).toBe(0);
    const create = d.event("CreateContainer");
    expect(goMessage(ContainerAdjustmentSchema, create.adjust)).toEqual(expected(ContainerAdjustmentSchema, everyKind(era, true).build()));
    // Evictions travel (test/api/builders.test.ts reads them back), but no Go runtime release merges them.
    expect(create.evict).toBeUndefined();
    const update = d.event("UpdateContainer");
    expect(update.update!.map((u) => goMessage(ContainerUpdateSchema, u))).toEqual([expected(ContainerUpdateSchema, everyResource("ctr1", true).build())]);
    expect(update.evict).toBeUndefined();
    expect(d.event("StopContainer").update!.map((u) => goMessage(ContainerUpdateSchema, u))).toEqual([expected(ContainerUpdateSchema, { containerId: "ctr0", linux: { resources: { cpu: { shares: { value: 2n } } } } })]);
    expect(plugin!.runtime).toEqual({ name: "nri-wire-peer", version: era, nriVersion: era === "v0.11.0" ? undefined : era, nriVersionInferred: false, revision: "v1alpha1" });
    plugin!.close();
  });
});
