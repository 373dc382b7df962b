import type { JsonValue } from "@bufbuild/protobuf";
import { expect } from "vitest";
import type { DefaultValidatorConfig } from "../../src/runtime/default-validator.js";
import type { Scenario, ScriptedPlugin } from "./adapt-scenario.js";

/**
 * Hand-written scenarios for the differential test: each runs through nri-wire's engine and the
 * Go judge, and each states what nri-wire must answer (`error` exact, or a check on the outcome),
 * so it says something even where Go is not installed.
 */
export interface Case {
  name: string;
  scenario: Scenario;
  /** The exact error text, or null for success. */
  error: string | null;
  /** Further checks on nri-wire's outcome (response and what plugins received). */
  check?: (o: { response: JsonValue | null; received: { plugin: string; request: JsonValue }[]; validations: { plugin: string; request: JsonValue }[] }) => void;
}

export const POD = { id: "pod0", name: "p", namespace: "ns", annotations: { "pod-note": "x" } };

/** The container being created: something of every kind a plugin can adjust or remove. */
export const CONTAINER = {
  id: "ctr0",
  podSandboxId: "pod0",
  name: "c",
  annotations: { orig: "v" },
  args: ["sh", "-c", "true"],
  env: ["ORIG=1", "PATH=/bin"],
  mounts: [{ destination: "/orig", source: "/src", type: "bind", options: ["rbind"] }],
  rlimits: [{ type: "RLIMIT_CORE", hard: "1", soft: "1" }],
  linux: {
    namespaces: [{ type: "ipc" }, { type: "pid", path: "/proc/1/ns/pid" }],
    devices: [{ path: "/dev/orig", type: "c", major: "1", minor: "3" }],
    resources: { memory: { limit: { value: "1000" } }, cpu: { shares: { value: "2" } } },
    sysctl: { "net.orig": "1" },
  },
};

export function create(plugins: ScriptedPlugin[], extra: { container?: Record<string, JsonValue>; pod?: Record<string, JsonValue>; defaultValidator?: DefaultValidatorConfig } = {}): Scenario {
  const s: Scenario = {
    event: "CreateContainer",
    request: { pod: { ...POD, ...extra.pod }, container: { ...CONTAINER, ...extra.container } },
    plugins,
  };
  if (extra.defaultValidator !== undefined) s.defaultValidator = extra.defaultValidator;
  return s;
}

/** A plugin answering CreateContainer with this adjustment (and updates). */
export function adjusting(id: string, adjust: JsonValue, update?: JsonValue[]): ScriptedPlugin {
  const [idx, name] = split(id);
  const reply: Record<string, JsonValue> = { adjust };
  if (update !== undefined) reply.update = update;
  return { idx, name, reply };
}

/** A plugin answering with updates only. */
export function updating(id: string, update: JsonValue[]): ScriptedPlugin {
  const [idx, name] = split(id);
  return { idx, name, reply: { update } };
}

/** A validator that handles nothing else. */
export function validator(id: string, reject = false, reason = ""): ScriptedPlugin {
  const [idx, name] = split(id);
  return { idx, name, handles: false, validate: { reject, reason } };
}

function split(id: string): [string, string] {
  const d = id.indexOf("-");
  return [id.slice(0, d), id.slice(d + 1)];
}

const mem = (limit: number) => ({ memory: { limit: { value: String(limit) } } });
const cpuShares = (v: number) => ({ cpu: { shares: { value: String(v) } } });
const upd = (id: string, resources: JsonValue, ignoreFailure = false): JsonValue => ({ containerId: id, linux: { resources }, ...(ignoreFailure ? { ignoreFailure } : {}) });

type Obj = Record<string, JsonValue>;
const o = (v: JsonValue | null | undefined): Obj => (v !== null && typeof v === "object" && !Array.isArray(v) ? v : {});
const adjustOf = (r: JsonValue | null) => o(o(r).adjust);
const containerOf = (r: JsonValue) => o(o(r).container);

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  expect(actual, what).toEqual(expected);
}

const conflict = (claimer: string, owner: string, what: string) => `plugins "${claimer}" and "${owner}" both tried to set ${what}`;

export const CASES: Case[] = [
  {
    name: "no adjustment: nil, empty and unsubscribed plugins leave Go's empty reply",
    scenario: create([{ idx: "10", name: "a", reply: null }, { idx: "20", name: "b", reply: {} }, { idx: "30", name: "c", handles: false }, { idx: "40", name: "d", reply: { adjust: {} } }]),
    error: null,
    check: (r) => expectEqual(r.response, { adjust: { hooks: {}, linux: { resources: { memory: {}, cpu: {} } } } }, "response"),
  },
  {
    name: "annotations: plugins add keys, later plugins see them",
    scenario: create([adjusting("10-a", { annotations: { a: "1" } }), adjusting("20-b", { annotations: { b: "2" } })]),
    error: null,
    check: (r) => {
      expectEqual(adjustOf(r.response).annotations, { a: "1", b: "2" }, "annotations");
      expectEqual(containerOf(r.received[1]!.request).annotations, { orig: "v", a: "1" }, "seen by 20-b");
    },
  },
  {
    name: "annotations: a second plugin setting the same key conflicts",
    scenario: create([adjusting("10-a", { annotations: { k: "1" } }), adjusting("20-b", { annotations: { k: "2" } }), adjusting("30-c", { annotations: { z: "3" } })]),
    error: conflict("20-b", "10-a", "Annotations k"),
  },
  {
    name: "annotations: removal only puts a marker beside the earlier value and hides nothing",
    scenario: create([adjusting("10-a", { annotations: { x: "1" } }), adjusting("20-b", { annotations: { "-x": "", "-orig": "" } }), adjusting("30-c", {})]),
    error: null,
    check: (r) => {
      expectEqual(adjustOf(r.response).annotations, { x: "1", "-x": "", "-orig": "" }, "annotations");
      expectEqual(containerOf(r.received[2]!.request).annotations, { orig: "v", x: "1" }, "seen by 30-c");
    },
  },
  {
    name: "annotations: the replace idiom takes a key over, a third plugin then conflicts with the new owner",
    scenario: create([adjusting("10-a", { annotations: { x: "1" } }), adjusting("20-b", { annotations: { "-x": "", x: "2" } }), adjusting("30-c", { annotations: { x: "3" } })]),
    error: conflict("30-c", "20-b", "Annotations x"),
  },
  {
    name: "annotations: the replace idiom on an original key",
    scenario: create([adjusting("10-a", { annotations: { "-orig": "", orig: "new" } }), adjusting("20-b", {})]),
    error: null,
    check: (r) => {
      expectEqual(adjustOf(r.response).annotations, { "-orig": "", orig: "new" }, "annotations");
      expectEqual(containerOf(r.received[1]!.request).annotations, { orig: "new" }, "seen by 20-b");
    },
  },
  {
    name: "mounts: add, modify and remove originals; an unmatched removal stays as a marker",
    scenario: create([
      adjusting("10-a", { mounts: [{ destination: "/a", source: "/x" }, { destination: "/orig", source: "/other" }] }),
      adjusting("20-b", { mounts: [{ destination: "-/gone" }, { destination: "-/also-gone" }, { destination: "/b" }] }),
      adjusting("30-c", {}),
    ]),
    error: null,
    check: (r) => {
      expectEqual(
        adjustOf(r.response).mounts,
        [{ destination: "/a", source: "/x" }, { destination: "/orig", source: "/other" }, { destination: "/b" }, { destination: "-/also-gone" }, { destination: "-/gone" }],
        "mounts",
      );
      expectEqual(containerOf(r.received[2]!.request).mounts, [{ destination: "/a", source: "/x" }, { destination: "/orig", source: "/other" }, { destination: "/b" }], "seen by 30-c");
    },
  },
  {
    name: "mounts: removing another plugin's mount drops it and leaves the remover's marker as owner",
    scenario: create([adjusting("10-a", { mounts: [{ destination: "/m" }] }), adjusting("20-b", { mounts: [{ destination: "-/m" }] }), adjusting("30-c", { mounts: [{ destination: "/m", source: "/c" }] })]),
    error: conflict("30-c", "20-b", "Mounts /m"),
  },
  {
    name: "mounts: a plugin removing and re-adding the same destination keeps it",
    scenario: create([adjusting("10-a", { mounts: [{ destination: "/m" }] }), adjusting("20-b", { mounts: [{ destination: "-/m" }, { destination: "/m", source: "/b" }] }), validator("90-v")]),
    error: null,
    check: (r) => {
      expectEqual(adjustOf(r.response).mounts, [{ destination: "/m", source: "/b" }], "mounts");
      const owners = o(o(o(o(r.validations[0]!.request).owners).owners).ctr0);
      expectEqual(o(o(owners.compound)["2"]).owners, { "/m": "20-b" }, "mount owner");
    },
  },
  {
    name: "env: removal hides a variable from later plugins and never reaches the reply",
    scenario: create([adjusting("10-a", { env: [{ key: "-ORIG" }, { key: "PATH", value: "/usr/bin" }, { key: "NEW", value: "1" }] }), adjusting("20-b", {})]),
    error: null,
    check: (r) => {
      expectEqual(adjustOf(r.response).env, [{ key: "PATH", value: "/usr/bin" }, { key: "NEW", value: "1" }], "env");
      expectEqual(containerOf(r.received[1]!.request).env, ["PATH=/usr/bin", "NEW=1"], "seen by 20-b");
    },
  },
  {
    name: "env: removing another plugin's variable drops it from the reply",
    scenario: create([adjusting("10-a", { env: [{ key: "A", value: "1" }] }), adjusting("20-b", { env: [{ key: "-A" }] }), adjusting("30-c", { env: [{ key: "A", value: "3" }] })]),
    error: conflict("30-c", "20-b", "Env A"),
  },
  {
    name: "env: a plugin setting a variable twice conflicts with itself",
    scenario: create([adjusting("20-b", { env: [{ key: "SELF", value: "1" }, { key: "SELF", value: "2" }] })]),
    error: conflict("20-b", "20-b", "Env SELF"),
  },
  {
    name: "devices: add, modify, remove",
    scenario: create([
      adjusting("10-a", { linux: { devices: [{ path: "/dev/a", type: "c", major: "10", minor: "1" }, { path: "-/dev/orig" }] } }),
      adjusting("20-b", { linux: { devices: [{ path: "/dev/a", type: "b" }] } }),
    ]),
    error: conflict("20-b", "10-a", "Devices /dev/a"),
  },
  {
    name: "devices: removal of an original device is hidden from later plugins, not in the reply",
    scenario: create([adjusting("10-a", { linux: { devices: [{ path: "-/dev/orig" }, { path: "/dev/new", type: "c" }] } }), adjusting("20-b", {})]),
    error: null,
    check: (r) => {
      expectEqual(o(adjustOf(r.response).linux).devices, [{ path: "/dev/new", type: "c" }], "devices");
      expectEqual(o(containerOf(r.received[1]!.request).linux).devices, [{ path: "/dev/new", type: "c" }], "seen by 20-b");
    },
  },
  {
    name: "args: a second plugin setting args conflicts (trailing space)",
    scenario: create([adjusting("10-a", { args: ["a"] }), adjusting("20-b", { args: ["b"] })]),
    error: conflict("20-b", "10-a", "Args "),
  },
  {
    name: "args: a leading empty string clears the owner first",
    scenario: create([adjusting("10-a", { args: ["a"] }), adjusting("20-b", { args: ["", "b", "c"] }), adjusting("30-c", {})]),
    error: null,
    check: (r) => {
      expectEqual(adjustOf(r.response).args, ["b", "c"], "args");
      expectEqual(containerOf(r.received[2]!.request).args, ["b", "c"], "seen by 30-c");
    },
  },
  {
    name: "hooks: accumulate from every plugin, never conflict, owners joined",
    scenario: create([
      adjusting("10-a", { hooks: { prestart: [{ path: "/a" }], createRuntime: [{ path: "/a2", args: ["x"] }] } }),
      adjusting("20-b", { hooks: { prestart: [{ path: "/b" }], poststop: [{ path: "/b2" }], startContainer: [{ path: "/b3" }] } }),
      adjusting("30-c", { hooks: {} }),
      validator("90-v"),
    ]),
    error: null,
    check: (r) => {
      expectEqual(adjustOf(r.response).hooks, { prestart: [{ path: "/a" }, { path: "/b" }], poststop: [{ path: "/b2" }], createRuntime: [{ path: "/a2", args: ["x"] }], startContainer: [{ path: "/b3" }] }, "hooks");
      const owners = o(o(o(o(r.validations[0]!.request).owners).owners).ctr0);
      expectEqual(o(owners.simple)["3"], "10-a,20-b", "hooks owner");
    },
  },
  {
    name: "resources: every memory and CPU field merges; device rules append without owners",
    scenario: create([
      adjusting("10-a", {
        linux: {
          resources: {
            memory: { limit: { value: "100" }, reservation: { value: "50" }, swap: { value: "200" }, kernel: { value: "1" }, kernelTcp: { value: "2" }, swappiness: { value: "60" }, disableOomKiller: { value: true }, useHierarchy: { value: false } },
            cpu: { shares: { value: "512" }, quota: { value: "-1" }, period: { value: "100000" }, realtimeRuntime: { value: "5" }, realtimePeriod: { value: "6" }, cpus: "0-1", mems: "0" },
            devices: [{ allow: true, type: "c", major: { value: "1" }, access: "rwm" }],
          },
        },
      }),
      adjusting("20-b", { linux: { resources: { devices: [{ allow: false, type: "a" }], hugepageLimits: [{ pageSize: "2MB", limit: "4" }], unified: { "memory.high": "1" }, blockioClass: { value: "gold" }, rdtClass: { value: "rdt" }, pids: { limit: "77" } } } }),
      adjusting("30-c", {}),
    ]),
    error: null,
  },
  ...(
    [
      ["MemLimit ", { memory: { limit: { value: "1" } } }],
      ["MemReservation ", { memory: { reservation: { value: "1" } } }],
      ["MemSwapLimit ", { memory: { swap: { value: "1" } } }],
      ["MemKernelLimit ", { memory: { kernel: { value: "1" } } }],
      ["MemTCPLimit ", { memory: { kernelTcp: { value: "1" } } }],
      ["MemSwappiness ", { memory: { swappiness: { value: "1" } } }],
      ["MemDisableOomKiller ", { memory: { disableOomKiller: { value: false } } }],
      ["MemUseHierarchy ", { memory: { useHierarchy: { value: true } } }],
      ["CPUShares ", { cpu: { shares: { value: "1" } } }],
      ["CPUQuota ", { cpu: { quota: { value: "1" } } }],
      ["CPUPeriod ", { cpu: { period: { value: "1" } } }],
      ["CPURealtimeRuntime ", { cpu: { realtimeRuntime: { value: "1" } } }],
      ["CPURealtimePeriod ", { cpu: { realtimePeriod: { value: "1" } } }],
      ["CPUSetCPUs ", { cpu: { cpus: "1" } }],
      ["CPUSetMems ", { cpu: { mems: "1" } }],
      ["HugepageLimits 1GB", { hugepageLimits: [{ pageSize: "1GB", limit: "1" }] }],
      ["CgroupsUnified io.max", { unified: { "io.max": "x" } }],
      ["BlockioClass ", { blockioClass: { value: "" } }],
      ["RdtClass ", { rdtClass: { value: "" } }],
      ["PidsLimit ", { pids: { limit: "0" } }],
    ] satisfies [string, JsonValue][]
  ).map(
    ([what, resources]): Case => ({
      name: `resources: ${what.trim()} conflicts`,
      scenario: create([adjusting("10-a", { linux: { resources } }), adjusting("20-b", { linux: { resources } })]),
      error: conflict("20-b", "10-a", what),
    }),
  ),
  ...(
    [
      ["CgroupsPath ", { cgroupsPath: "/a" }],
      ["OomScoreAdj ", { oomScoreAdj: { value: 0 } }],
      ["IoPriority ", { ioPriority: { class: "IOPRIO_CLASS_RT", priority: 1 } }],
      ["SeccompPolicy ", { seccompPolicy: { defaultAction: "SCMP_ACT_ERRNO" } }],
      ["LinuxSched ", { scheduler: { policy: "SCHED_FIFO", priority: 10 } }],
      ["MemoryPolicy ", { memoryPolicy: { mode: "MPOL_BIND", nodes: "0" } }],
      ["RdtClosID ", { rdt: { closId: { value: "c" } } }],
      ["RdtSchemata ", { rdt: { schemata: { value: ["L3:0=f"] } } }],
      ["RdtEnableMonitoring ", { rdt: { enableMonitoring: { value: true } } }],
      ["Namespace net", { namespaces: [{ type: "net", path: "/x" }] }],
      ["Sysctl net.x", { sysctl: { "net.x": "1" } }],
      ["LinuxNetDevices eth0", { netDevices: { eth0: { name: "net0" } } }],
    ] satisfies [string, JsonValue][]
  ).map(
    ([what, linux]): Case => ({
      name: `linux: ${what.trim()} conflicts`,
      scenario: create([adjusting("10-a", { linux }), adjusting("20-b", { linux })]),
      error: conflict("20-b", "10-a", what),
    }),
  ),
  {
    name: "linux: single-valued fields set once each reach the reply and later plugins (memory policy: reply only)",
    scenario: create([
      adjusting("10-a", { linux: { cgroupsPath: "/cg", oomScoreAdj: { value: -10 }, ioPriority: { class: "IOPRIO_CLASS_BE", priority: 4 }, seccompPolicy: { defaultAction: "SCMP_ACT_ALLOW", architectures: ["x86"] } } }),
      adjusting("20-b", { linux: { scheduler: { policy: "SCHED_RR", priority: 1 }, memoryPolicy: { mode: "MPOL_INTERLEAVE", nodes: "0-1" } } }),
      adjusting("30-c", {}),
    ]),
    error: null,
  },
  {
    name: "namespaces: additions and removals are claimed and listed; later plugins see the result",
    scenario: create([adjusting("10-a", { linux: { namespaces: [{ type: "net", path: "/n" }, { type: "-ipc" }, { type: "pid", path: "/p2" }] } }), adjusting("20-b", {})]),
    error: null,
    check: (r) => {
      expectEqual(o(adjustOf(r.response).linux).namespaces, [{ type: "net", path: "/n" }, { type: "-ipc" }, { type: "pid", path: "/p2" }], "namespaces");
    },
  },
  {
    name: "namespaces: a removal claims the type too",
    scenario: create([adjusting("10-a", { linux: { namespaces: [{ type: "-ipc" }] } }), adjusting("20-b", { linux: { namespaces: [{ type: "ipc" }] } })]),
    error: conflict("20-b", "10-a", "Namespace ipc"),
  },
  {
    name: "sysctl: removal-only marker, replace idiom, later plugins see the result",
    scenario: create([adjusting("10-a", { linux: { sysctl: { "net.a": "1", "-net.orig": "" } } }), adjusting("20-b", { linux: { sysctl: { "-net.a": "", "net.a": "2", "-net.none": "" } } }), adjusting("30-c", {})]),
    error: null,
    check: (r) => {
      expectEqual(o(adjustOf(r.response).linux).sysctl, { "net.a": "2", "-net.orig": "", "-net.a": "", "-net.none": "" }, "sysctl");
      expectEqual(o(containerOf(r.received[2]!.request).linux).sysctl, { "net.orig": "1", "net.a": "2" }, "seen by 30-c");
    },
  },
  {
    name: "net devices: markers are empty devices in the reply; replace idiom",
    scenario: create([adjusting("10-a", { linux: { netDevices: { eth0: { name: "a" }, "-eth9": {} } } }), adjusting("20-b", { linux: { netDevices: { "-eth0": {}, eth0: { name: "b" } } } }), adjusting("30-c", {})]),
    error: null,
    check: (r) => expectEqual(o(adjustOf(r.response).linux).netDevices, { eth0: { name: "b" }, "-eth9": {}, "-eth0": {} }, "net devices"),
  },
  {
    name: "rdt: any linux part leaves an empty rdt in the reply (upstream quirk)",
    scenario: create([adjusting("10-a", { linux: {} })]),
    error: null,
    check: (r) => expectEqual(o(adjustOf(r.response).linux).rdt, {}, "rdt"),
  },
  {
    name: "rdt: removal resets the reply and clears owners; a setting by the remover itself clears remove",
    scenario: create([adjusting("10-a", { linux: { rdt: { closId: { value: "a" }, schemata: { value: ["L3:0=1"] } } } }), adjusting("20-b", { linux: { rdt: { remove: true, closId: { value: "b" } } } }), adjusting("30-c", {})]),
    error: null,
    check: (r) => expectEqual(o(adjustOf(r.response).linux).rdt, { closId: { value: "b" } }, "rdt"),
  },
  {
    name: "rdt: removal alone propagates remove",
    scenario: create([adjusting("10-a", { linux: { rdt: { closId: { value: "a" } } } }), adjusting("20-b", { linux: { rdt: { remove: true } } })]),
    error: null,
    check: (r) => expectEqual(o(adjustOf(r.response).linux).rdt, { remove: true }, "rdt"),
  },
  {
    name: "rdt: after a removal, another plugin conflicts with the remover",
    scenario: create([adjusting("10-a", { linux: { rdt: { remove: true } } }), adjusting("20-b", { linux: { rdt: { enableMonitoring: { value: false } } } })]),
    error: conflict("20-b", "10-a", "RdtEnableMonitoring "),
  },
  {
    name: "rlimits: appended; the same type conflicts",
    scenario: create([adjusting("10-a", { rlimits: [{ type: "RLIMIT_NOFILE", hard: "10", soft: "5" }] }), adjusting("20-b", { rlimits: [{ type: "RLIMIT_NPROC", hard: "1" }, { type: "RLIMIT_NOFILE", hard: "1" }] })]),
    error: conflict("20-b", "10-a", "Rlimits RLIMIT_NOFILE"),
  },
  {
    name: "CDI devices: reply only; the same name conflicts",
    scenario: create([adjusting("10-a", { CDIDevices: [{ name: "vendor.com/gpu=0" }] }), adjusting("20-b", { CDIDevices: [{ name: "vendor.com/gpu=1" }, { name: "vendor.com/gpu=0" }] })]),
    error: conflict("20-b", "10-a", "CdiDevices vendor.com/gpu=0"),
  },
  {
    name: "CDI devices and rlimits merge without conflict",
    scenario: create([adjusting("10-a", { CDIDevices: [{ name: "v/g=0" }], rlimits: [{ type: "RLIMIT_NOFILE", hard: "10" }] }), adjusting("20-b", { CDIDevices: [{ name: "v/g=1" }] }), adjusting("30-c", {})]),
    error: null,
  },
  {
    name: "the first conflict aborts: annotations are merged before mounts",
    scenario: create([adjusting("10-a", { annotations: { k: "1" }, mounts: [{ destination: "/m" }] }), adjusting("20-b", { mounts: [{ destination: "/m" }], annotations: { k: "2" } })]),
    error: conflict("20-b", "10-a", "Annotations k"),
  },
  {
    name: "evictions are ignored",
    scenario: create([{ idx: "10", name: "a", reply: { adjust: { annotations: { a: "1" } }, evict: [{ containerId: "ctr9", reason: "why" }] } }]),
    error: null,
  },
  {
    name: "a plugin's error fails the event with its text",
    scenario: create([adjusting("10-a", { annotations: { a: "1" } }), { idx: "20", name: "b", error: "boom" }, adjusting("30-c", {})]),
    error: "boom",
  },
  {
    name: "duplicate plugin names both run and conflict with each other",
    scenario: create([adjusting("10-dup", { annotations: { k: "1" } }), adjusting("10-dup", { annotations: { k: "2" } })]),
    error: conflict("10-dup", "10-dup", "Annotations k"),
  },
  {
    name: "updates in CreateContainer: merged per container in first-mention order, ignore_failure ANDed, pids never applied",
    scenario: create([
      adjusting("10-a", {}, [upd("ctr2", { ...mem(5), pids: { limit: "3" } }, true), upd("ctr1", cpuShares(4), true)]),
      updating("20-b", [upd("ctr1", { hugepageLimits: [{ pageSize: "2MB", limit: "1" }], unified: { "a.b": "c" }, blockioClass: { value: "x" }, rdtClass: { value: "y" } })]),
      updating("30-c", [upd("ctr2", { cpu: { cpus: "1", mems: "0" } }, true), { containerId: "ctr3" }]),
    ]),
    error: null,
    check: (r) => {
      const ids = (o(r.response).update as JsonValue[]).map((u) => o(u).containerId);
      expectEqual(ids, ["ctr2", "ctr1", "ctr3"], "update order");
    },
  },
  {
    name: "updates in CreateContainer: updating the container being created fails",
    scenario: create([updating("10-a", [upd("ctr1", mem(1)), upd("ctr0", mem(1))])]),
    error: `plugin "10-a" asked update of "ctr0" during creation`,
  },
  {
    name: "updates in CreateContainer: the id in the error is quoted as Go quotes",
    scenario: create([updating("10-a", [upd('c"t\\r\n\t\u00a0\u00ad\u2028é😀\x7f', mem(1))])], { container: { id: 'c"t\\r\n\t\u00a0\u00ad\u2028é😀\x7f' } }),
    error: 'plugin "10-a" asked update of "c\\"t\\\\r\\n\\t\\u00a0\\u00ad\\u2028é😀\\x7f" during creation',
  },
  {
    name: "updates in CreateContainer: a conflict fails the event",
    scenario: create([updating("10-a", [upd("ctr1", mem(1))]), updating("20-b", [upd("ctr1", mem(2))])]),
    error: conflict("20-b", "10-a", "MemLimit "),
  },
  {
    name: "updates in CreateContainer: a conflict with ignore_failure discards that plugin's whole update",
    scenario: create([updating("10-a", [upd("ctr1", mem(1))]), updating("20-b", [upd("ctr1", { ...cpuShares(9), ...mem(2) }, true), upd("ctr2", cpuShares(1))])]),
    error: null,
    check: (r) => {
      const u = (o(r.response).update as JsonValue[]).map((x) => o(o(o(x).linux).resources));
      expectEqual(u[0], { memory: { limit: { value: "1" } }, cpu: {} }, "ctr1 keeps 10-a's update only");
    },
  },
  {
    name: "updates and adjustments share owners per container",
    scenario: create([adjusting("10-a", { linux: { resources: mem(1) } }, [upd("ctr1", mem(1))]), adjusting("20-b", { linux: { resources: cpuShares(1) } }, [upd("ctr1", cpuShares(1))]), validator("90-v")]),
    error: null,
  },
  {
    name: "validators receive the pod, the original container, every plugin, the merged reply and all owners",
    scenario: create([
      { idx: "05", name: "idle", handles: false },
      adjusting("10-a", { annotations: { x: "1" }, mounts: [{ destination: "/m" }], hooks: { prestart: [{ path: "/h" }] } }, [upd("ctr1", mem(3))]),
      adjusting("20-b", { mounts: [{ destination: "-/m" }], hooks: { poststart: [{ path: "/h2" }] }, args: ["", "b"] }),
      validator("80-v"),
      { ...validator("90-w"), handles: true, reply: { adjust: { env: [{ key: "W", value: "1" }] } } },
    ]),
    error: null,
    check: (r) => {
      if (r.validations.length !== 2) throw new Error("two validators must run");
      const req = o(r.validations[0]!.request);
      expectEqual(o(req.container).annotations, { orig: "v" }, "original container");
      expectEqual(req.plugins, [{ name: "idle", index: "05" }, { name: "a", index: "10" }, { name: "b", index: "20" }, { name: "v", index: "80" }, { name: "w", index: "90" }], "plugins");
      expectEqual(req.owners, { owners: { ctr0: { simple: { "3": "10-a,20-b", "7": "20-b" }, compound: { "1": { owners: { x: "10-a" } }, "2": { owners: { "/m": "-20-b" } }, "6": { owners: { W: "90-w" } } } }, ctr1: { simple: { "8": "10-a" } } } }, "owners");
    },
  },
  {
    name: "a validator rejects with its reason",
    scenario: create([adjusting("10-a", { annotations: { a: "1" } }), validator("90-v", true, "no way")]),
    error: `validator "90-v" rejected container adjustment, reason: no way`,
  },
  {
    name: "a validator rejecting without a reason",
    scenario: create([validator("90-v", true, "")]),
    error: `validator "90-v" rejected container adjustment, reason: unknown rejection reason`,
  },
  {
    name: "several validators reject: Go reports one, nri-wire the first in order",
    scenario: create([validator("80-v", true, "first"), validator("90-w", true, "second"), validator("95-x")]),
    error: `validator "80-v" rejected container adjustment, reason: first`,
  },
  {
    name: "validators are not consulted when the merge fails",
    scenario: create([adjusting("10-a", { args: ["a"] }), adjusting("20-b", { args: ["b"] }), validator("90-v", true, "never")]),
    error: conflict("20-b", "10-a", "Args "),
  },
  // UpdateContainer
  {
    name: "UpdateContainer: the target merges on the request's resources and comes last",
    scenario: {
      event: "UpdateContainer",
      request: { pod: POD, container: { id: "ctr1" }, linuxResources: { memory: { limit: { value: "100" } }, hugepageLimits: [{ pageSize: "2MB", limit: "1" }], devices: [{ allow: true, type: "a" }] } },
      plugins: [updating("10-a", [upd("ctr1", cpuShares(5)), upd("ctr2", mem(1))]), updating("20-b", [upd("ctr3", mem(3)), upd("ctr1", { unified: { k: "v" } })]), updating("30-c", [])],
    },
    error: null,
    check: (r) => {
      const ids = (o(r.response).update as JsonValue[]).map((u) => o(u).containerId);
      expectEqual(ids, ["ctr2", "ctr3", "ctr1"], "update order");
      expectEqual(o(o(o(r.received[1]!.request).linuxResources).cpu).shares, { value: "5" }, "20-b sees the target as 10-a updated it");
    },
  },
  {
    name: "UpdateContainer: no plugin updates the target: an empty entry ends the list",
    scenario: { event: "UpdateContainer", request: { container: { id: "ctr1" } }, plugins: [updating("10-a", [upd("ctr2", mem(1))]), { idx: "20", name: "b", reply: null }] },
    error: null,
    check: (r) => expectEqual(o(r.response).update, [{ containerId: "ctr2", linux: { resources: { memory: { limit: { value: "1" } }, cpu: {} } } }, {}], "updates"),
  },
  {
    name: "UpdateContainer: with a pids limit in the request every plugin updating the target claims it (upstream quirk)",
    scenario: { event: "UpdateContainer", request: { container: { id: "ctr1" }, linuxResources: { pids: { limit: "9" } } }, plugins: [updating("10-a", [upd("ctr1", cpuShares(1))]), updating("20-b", [upd("ctr1", {})])] },
    error: conflict("20-b", "10-a", "PidsLimit "),
  },
  {
    name: "UpdateContainer: the pids claim is skipped with ignore_failure",
    scenario: { event: "UpdateContainer", request: { container: { id: "ctr1" }, linuxResources: { pids: { limit: "9" } } }, plugins: [updating("10-a", [upd("ctr1", cpuShares(1))]), updating("20-b", [upd("ctr1", mem(5), true)])] },
    error: null,
  },
  {
    name: "UpdateContainer: a conflict on another container",
    scenario: { event: "UpdateContainer", request: { container: { id: "ctr1" } }, plugins: [updating("10-a", [upd("ctr2", { hugepageLimits: [{ pageSize: "1GB", limit: "1" }] })]), updating("20-b", [upd("ctr2", { hugepageLimits: [{ pageSize: "1GB", limit: "2" }] })])] },
    error: conflict("20-b", "10-a", "HugepageLimits 1GB"),
  },
  {
    name: "UpdateContainer: evictions are ignored",
    scenario: { event: "UpdateContainer", request: { container: { id: "ctr1" } }, plugins: [{ idx: "10", name: "a", reply: { update: [upd("ctr1", mem(1))], evict: [{ containerId: "ctr2" }] } }] },
    error: null,
  },
  // StopContainer
  {
    name: "StopContainer: updates of any container, the stopped one included, first mention first",
    scenario: { event: "StopContainer", request: { pod: POD, container: { id: "ctr1" } }, plugins: [updating("10-a", [upd("ctr1", mem(1)), upd("ctr2", cpuShares(1))]), updating("20-b", [upd("ctr3", mem(1)), upd("ctr1", cpuShares(2))])] },
    error: null,
    check: (r) => {
      const ids = (o(r.response).update as JsonValue[]).map((u) => o(u).containerId);
      expectEqual(ids, ["ctr1", "ctr2", "ctr3"], "update order");
    },
  },
  {
    name: "StopContainer: conflicts",
    scenario: { event: "StopContainer", request: { container: { id: "ctr1" } }, plugins: [updating("10-a", [upd("ctr2", { blockioClass: { value: "a" } })]), updating("20-b", [upd("ctr2", { blockioClass: { value: "b" } })])] },
    error: conflict("20-b", "10-a", "BlockioClass "),
  },
  {
    name: "StopContainer: nothing to update",
    scenario: { event: "StopContainer", request: { container: { id: "ctr1" } }, plugins: [{ idx: "10", name: "a", reply: null }, updating("20-b", [])] },
    error: null,
    check: (r) => expectEqual(r.response, {}, "response"),
  },
  // The default validator
  ...defaultValidatorCases(),
];

function dv(name: string, plugins: ScriptedPlugin[], config: DefaultValidatorConfig, error: string | null, extra: { container?: Record<string, JsonValue>; pod?: Record<string, JsonValue> } = {}): Case {
  return { name: `default validator: ${name}`, scenario: create(plugins, { ...extra, defaultValidator: { enable: true, ...config } }), error };
}

function rejected(reason: string): string {
  return `validator "00-default-validator" rejected container adjustment, reason: ${reason}`;
}

function defaultValidatorCases(): Case[] {
  const hookA = adjusting("10-a", { hooks: { prestart: [{ path: "/h" }] } });
  const hookB = adjusting("20-b", { hooks: { poststop: [{ path: "/h" }] } });
  const seccomp = adjusting("10-a", { linux: { seccompPolicy: { defaultAction: "SCMP_ACT_LOG" } } });
  const profile = (profileType: string) => ({ container: { linux: { ...CONTAINER.linux, seccompProfile: { profileType } } } });
  return [
    dv("disabled: nothing checked", [hookA], { enable: false, rejectOCIHookAdjustment: true }, null),
    dv("enabled without checks accepts", [hookA, seccomp], {}, null),
    dv("OCI hooks by one plugin", [hookA], { rejectOCIHookAdjustment: true }, rejected(`validation error: plugin "10-a" attempted restricted OCI hook injection`)),
    dv("OCI hooks by two plugins", [hookA, hookB], { rejectOCIHookAdjustment: true }, rejected(`validation error: plugins "10-a,20-b" attempted restricted OCI hook injection`)),
    dv("seccomp: no profile counts as unconfined", [seccomp], { rejectUnconfinedSeccompAdjustment: true }, rejected("validation error: plugin 10-a attempted restricted  unconfined seccomp policy adjustment")),
    dv("seccomp: unconfined", [seccomp], { rejectUnconfinedSeccompAdjustment: true }, rejected("validation error: plugin 10-a attempted restricted  unconfined seccomp policy adjustment"), profile("UNCONFINED")),
    dv("seccomp: runtime default", [seccomp], { rejectRuntimeDefaultSeccompAdjustment: true }, rejected("validation error: plugin 10-a attempted restricted runtime default seccomp policy adjustment"), profile("RUNTIME_DEFAULT")),
    dv("seccomp: custom", [seccomp], { rejectCustomSeccompAdjustment: true }, rejected("validation error: plugin 10-a attempted restricted  custom seccomp policy adjustment"), profile("LOCALHOST")),
    dv("seccomp: only the container's profile type counts", [seccomp], { rejectUnconfinedSeccompAdjustment: true, rejectCustomSeccompAdjustment: true }, null, profile("RUNTIME_DEFAULT")),
    dv(
      "namespaces: every owner, joined",
      [adjusting("10-a", { linux: { namespaces: [{ type: "net", path: "/n" }] } }), adjusting("20-b", { linux: { namespaces: [{ type: "-ipc" }] } })],
      { rejectNamespaceAdjustment: true },
      rejected(`validation error: attempted restricted namespace adjustment by plugin(s) "20-b" (namespace "ipc"), "10-a" (namespace "net")`),
    ),
    dv("required plugins present by name and by idx-name", [adjusting("10-a", {}), { idx: "20", name: "b", handles: false }], { requiredPlugins: ["a", "20-b"] }, null),
    dv("a required plugin missing", [adjusting("10-a", {})], { requiredPlugins: ["a", "x"] }, rejected(`validation error: required plugin "x" not present`)),
    dv("required plugins missing", [adjusting("10-a", {})], { requiredPlugins: ["x", "10-b", "a", "99-a"] }, rejected(`validation error: required plugins "x,10-b,99-a" not present`)),
    dv("required plugins from a container-scoped annotation first", [adjusting("10-a", {})], {}, rejected(`validation error: required plugins "c1,c2" not present`), {
      pod: { annotations: { "required-plugins.noderesource.dev/container.c": "[c1, 'c2']", "required-plugins.noderesource.dev/pod": "- p1", "required-plugins.noderesource.dev": "[g]" } },
    }),
    dv("required plugins from a pod-scoped block list", [adjusting("10-a", {})], { requiredPlugins: ["a"] }, rejected(`validation error: required plugins "p1,p2" not present`), {
      pod: { annotations: { "required-plugins.noderesource.dev/container.other": "[o]", "required-plugins.noderesource.dev/pod": "# needed\n- p1\n- \"p2\"\n- a\n" } },
    }),
    dv("required plugins from the unscoped annotation", [adjusting("10-a", {})], {}, rejected(`validation error: required plugin "g" not present`), { pod: { annotations: { "required-plugins.noderesource.dev": "[g, a]" } } }),
    dv("an empty or null annotation requires nothing", [adjusting("10-a", {})], {}, null, { pod: { annotations: { "required-plugins.noderesource.dev/pod": "~" } } }),
    dv("an annotation that is not a list", [adjusting("10-a", {})], {}, rejected(`invalid required-plugins.noderesource.dev annotation "x": yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str \`x\` into []string`), {
      pod: { annotations: { "required-plugins.noderesource.dev": "x" } },
    }),
    dv("an annotation that is a map", [adjusting("10-a", {})], {}, rejected(`invalid required-plugins.noderesource.dev annotation "a: b": yaml: unmarshal errors:\n  line 1: cannot unmarshal !!map into []string`), {
      pod: { annotations: { "required-plugins.noderesource.dev": "a: b" } },
    }),
    dv("an annotation with a long number", [adjusting("10-a", {})], {}, rejected(`invalid required-plugins.noderesource.dev annotation "12345678901": yaml: unmarshal errors:\n  line 1: cannot unmarshal !!int \`1234567...\` into []string`), {
      pod: { annotations: { "required-plugins.noderesource.dev": "12345678901" } },
    }),
    dv("list items of any scalar type are their text, null items are dropped", [adjusting("10-a", {})], {}, rejected(`validation error: required plugins "1,true,2.5,x y" not present`), {
      pod: { annotations: { "required-plugins.noderesource.dev": "[1, true, 2.5, x y, ~]" } },
    }),
    ...(
      [
        ["[a, [b]]", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into string"],
        ["[a, {b: c}]", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!map into string"],
        ["[a, b", "yaml: line 1: did not find expected ',' or ']'"],
        ["[a,,b]", "yaml: did not find expected node content"],
        ["1.5", "yaml: unmarshal errors:\n  line 1: cannot unmarshal !!float `1.5` into []string"],
        ["\n'quoted text'", "yaml: unmarshal errors:\n  line 2: cannot unmarshal !!str `quoted ...` into []string"],
      ] as const
    ).map(([value, err]) =>
      dv(`an unreadable annotation ${JSON.stringify(value)}`, [adjusting("10-a", {})], {}, rejected(`invalid required-plugins.noderesource.dev annotation ${JSON.stringify(value)}: ${err}`), {
        pod: { annotations: { "required-plugins.noderesource.dev": value } },
      }),
    ),
    dv("a block list with comments, quotes and a null item", [adjusting("10-a", {})], {}, rejected(`validation error: required plugins "b,c" not present`), {
      pod: { annotations: { "required-plugins.noderesource.dev": "- a\n- 'b'\n-\n- c # note\n" } },
    }),
    dv("a flow list over two lines with quoting", [adjusting("10-a", {})], {}, rejected(`validation error: required plugins "it's,q\\"é" not present`), {
      pod: { annotations: { "required-plugins.noderesource.dev": " [ 'it''s',\n \"q\\\"\\u00e9\", a ,] # why" } },
    }),
    dv("the toleration annotation lets missing plugins pass", [adjusting("10-a", {})], { requiredPlugins: ["x"], tolerateMissingPluginsAnnotation: "tolerate.example.com" }, null, {
      pod: { annotations: { "tolerate.example.com/container.c": "true" } },
    }),
    dv("a false toleration does not", [adjusting("10-a", {})], { requiredPlugins: ["x"], tolerateMissingPluginsAnnotation: "tolerate.example.com" }, rejected(`validation error: required plugin "x" not present`), {
      pod: { annotations: { "tolerate.example.com/pod": "F" } },
    }),
    dv("an invalid toleration", [adjusting("10-a", {})], { requiredPlugins: ["x"], tolerateMissingPluginsAnnotation: "tolerate.example.com" }, rejected(`invalid tolerate.example.com annotation "yes": strconv.ParseBool: parsing "yes": invalid syntax`), {
      pod: { annotations: { "tolerate.example.com": "yes" } },
    }),
    dv(
      "sysctls: owners of the reply's keys, joined",
      [adjusting("10-a", { linux: { sysctl: { "net.a": "1", "-net.orig": "" } } }), adjusting("20-b", { linux: { sysctl: { "net.b": "1" } } })],
      { rejectSysctlAdjustment: true },
      rejected("validation error: attempted restricted sysctl adjustment by plugin(s) 10-a, 20-b"),
    ),
    dv("sysctls: a removal only has no owner", [adjusting("10-a", { linux: { sysctl: { "-net.orig": "" } } })], { rejectSysctlAdjustment: true }, null),
    dv(
      "checks run in order: hooks before namespaces before required plugins before sysctls",
      [adjusting("10-a", { hooks: { prestart: [{ path: "/h" }] }, linux: { namespaces: [{ type: "net" }], sysctl: { "net.a": "1" } } })],
      { rejectOCIHookAdjustment: true, rejectNamespaceAdjustment: true, rejectSysctlAdjustment: true, requiredPlugins: ["x"] },
      rejected(`validation error: plugin "10-a" attempted restricted OCI hook injection`),
    ),
    dv(
      "checks run in order: required plugins before sysctls",
      [adjusting("10-a", { linux: { sysctl: { "net.a": "1" } } })],
      { rejectSysctlAdjustment: true, requiredPlugins: ["x"] },
      rejected(`validation error: required plugin "x" not present`),
    ),
    dv("with another validator: both are asked", [adjusting("10-a", {}), validator("90-v", true, "mine")], { requiredPlugins: ["a"] }, `validator "90-v" rejected container adjustment, reason: mine`),
  ];
}
