import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ContainerAdjustmentSchema, ContainerUpdateSchema, IOPrioClass, MpolFlag, MpolMode } from "../../gen/v1beta1/api_pb.js";
import { AdjustmentBuilder } from "../../src/api/adjustment-builder.js";
import { markForRemoval, markedForRemoval } from "../../src/api/removal.js";
import { UpdateBuilder, eviction } from "../../src/api/update-builder.js";

describe("adjustment builder", () => {
  it("writes each kind where the protocol has it, removals as -key markers", () => {
    const got = new AdjustmentBuilder()
      .addAnnotation("a", "1")
      .removeAnnotation("b")
      .addMount({ destination: "/m", source: "/s", type: "bind" })
      .removeMount("/old")
      .addEnv("E", "v")
      .removeEnv("F")
      .updateArgs(["x"])
      .addHooks({ prestart: [{ path: "/p" }], poststop: [{ path: "/q", timeout: 3 }] })
      .addHook("prestart", { path: "/r" })
      .addRlimit("RLIMIT_NOFILE", 10, 5)
      .addDevice({ path: "/dev/a", major: 1, minor: 2, fileMode: 0o644 })
      .removeDevice("/dev/b")
      .addCDIDevice("v.com/c=d")
      .addOrReplaceNamespace({ type: "network", path: "/ns" })
      .removeNamespace("ipc")
      .addLinuxNetDevice("eth0", { name: "in0" })
      .removeLinuxNetDevice("eth1")
      .setLinuxMemoryPolicy(MpolMode.MPOL_INTERLEAVE, "0-1", MpolFlag.MPOL_F_RELATIVE_NODES)
      .setLinuxRDTClosID("c")
      .removeLinuxRDT()
      .setLinuxCgroupsPath("/cg")
      .setLinuxOomScoreAdj(-10)
      .setLinuxIOPriority({ class: IOPrioClass.IOPRIO_CLASS_RT, priority: 1 })
      .setLinuxSysctl("k", "v")
      .removeLinuxSysctl("old")
      .setLinuxMemoryLimit(100)
      .setLinuxCPUShares(2)
      .setLinuxPidLimits(-1)
      .addLinuxUnified("memory.max", "max")
      .build();
    expect(got).toEqual(
      create(ContainerAdjustmentSchema, {
        annotations: { a: "1", "-b": "" },
        mounts: [{ destination: "/m", source: "/s", type: "bind" }, { destination: "-/old" }],
        env: [{ key: "E", value: "v" }, { key: "-F" }],
        args: ["", "x"],
        hooks: { prestart: [{ path: "/p" }, { path: "/r" }], poststop: [{ path: "/q", timeout: { value: 3n } }] },
        rlimits: [{ type: "RLIMIT_NOFILE", hard: 10n, soft: 5n }],
        CDIDevices: [{ name: "v.com/c=d" }],
        linux: {
          devices: [{ path: "/dev/a", major: 1n, minor: 2n, fileMode: { value: 0o644 } }, { path: "-/dev/b" }],
          namespaces: [{ type: "network", path: "/ns" }, { type: "-ipc" }],
          netDevices: { eth0: { name: "in0" }, "-eth1": {} },
          memoryPolicy: { mode: MpolMode.MPOL_INTERLEAVE, nodes: "0-1", flags: [MpolFlag.MPOL_F_RELATIVE_NODES] },
          rdt: { closId: { value: "c" }, remove: true },
          cgroupsPath: "/cg",
          oomScoreAdj: { value: -10n },
          ioPriority: { class: IOPrioClass.IOPRIO_CLASS_RT, priority: 1 },
          sysctl: { k: "v", "-old": "" },
          resources: { memory: { limit: { value: 100n } }, cpu: { shares: { value: 2n } }, pids: { limit: -1n }, unified: { "memory.max": "max" } },
        },
      }),
    );
  });

  it("keeps a key __proto__ as an entry of annotations, sysctls, net devices and unified resources", () => {
    const got = new AdjustmentBuilder()
      .addAnnotation("__proto__", "a")
      .setLinuxSysctl("__proto__", "s")
      .addLinuxNetDevice("__proto__", { name: "n" })
      .addLinuxUnified("__proto__", "u")
      .build();
    expect(Object.entries(got.annotations)).toEqual([["__proto__", "a"]]);
    expect(Object.entries(got.linux?.sysctl ?? {})).toEqual([["__proto__", "s"]]);
    expect(Object.keys(got.linux?.netDevices ?? {})).toEqual(["__proto__"]);
    expect(Object.entries(got.linux?.resources?.unified ?? {})).toEqual([["__proto__", "u"]]);
    const back = fromBinary(ContainerAdjustmentSchema, toBinary(ContainerAdjustmentSchema, got));
    expect(Object.entries(back.annotations)).toEqual([["__proto__", "a"]]);
    expect(back.linux?.netDevices["__proto__"]?.name).toBe("n");
  });

  it("setArgs replaces, setLinuxOomScoreAdj(undefined) clears, and range errors name the field", () => {
    const a = new AdjustmentBuilder().updateArgs(["a"]).setArgs(["b"]).setLinuxOomScoreAdj(1).setLinuxOomScoreAdj(undefined).build();
    expect(a.args).toEqual(["b"]);
    expect(a.linux?.oomScoreAdj).toBeUndefined();
    expect(() => new AdjustmentBuilder().setLinuxCPUShares(-2)).toThrow("nri: linux.resources.cpu.shares: -2 is out of range for uint64 (0 to 18446744073709551615)");
    expect(() => new AdjustmentBuilder().addRlimit("RLIMIT_CPU", 1, -1)).toThrow("nri: rlimits[0].soft: -1 is out of range for uint64 (0 to 18446744073709551615)");
    expect(() => new AdjustmentBuilder().addLinuxHugepageLimit("2MB", 1.5)).toThrow("nri: linux.resources.hugepage_limits[0].limit: 1.5 is not an integer");
    expect(() => new AdjustmentBuilder().addDevice({ path: "/d", major: 2 ** 64 })).toThrow("nri: major: 18446744073709552000 is beyond 2^53 and has lost precision: give it as a bigint");
  });
});

describe("update builder and evictions", () => {
  it("writes resources under linux.resources and the failure flag", () => {
    const u = new UpdateBuilder("c1").setLinuxMemoryLimit(1n << 40n).setLinuxCPUQuota(-1).setLinuxRDTClass("r").setIgnoreFailure().setContainerId("c2").build();
    expect(u).toEqual(create(ContainerUpdateSchema, { containerId: "c2", ignoreFailure: true, linux: { resources: { memory: { limit: { value: 1n << 40n } }, cpu: { quota: { value: -1n } }, rdtClass: { value: "r" } } } }));
    expect(eviction("c3", "too big")).toMatchObject({ containerId: "c3", reason: "too big" });
  });

  it("removal markers: mark and read back", () => {
    expect(markForRemoval("key")).toBe("-key");
    expect(markedForRemoval("-key")).toBe("key");
    expect(markedForRemoval("key")).toBeUndefined();
  });
});
