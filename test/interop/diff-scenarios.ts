/**
 * The differential scenarios: each runs once on the Go runtime (containerd/nri v0.12.5
 * pkg/adaptation, test/interop/diff-peer) and once on nri-wire's runtime (diff-runtime.ts), with
 * the same scripted plugin processes, and the two outputs must agree line by line. The shape is
 * the Go driver's (diff-peer/scenario.go); protobuf-valued fields are protobuf JSON. See DIFF.md.
 */

/** Protobuf JSON of some message. */
export type Json = Record<string, unknown>;

/** One request's behaviour of a scripted plugin. */
export interface Action {
  /** The method's response message. */
  response?: Json;
  /** An error instead of a response, with a ttrpc status code (default 2, UNKNOWN). */
  error?: string;
  code?: number;
  /** Never answer. */
  hang?: boolean;
  /** Exit the process on receipt, without answering. */
  exit?: boolean;
  /** Answer with bytes that do not decode as the method's response. */
  undecodable?: boolean;
  /** UpdateContainers sent and awaited before answering. */
  updateContainers?: Json[];
}

/** What a scripted plugin does. */
export interface Script {
  registerName?: string;
  registerIdx?: string;
  hangRegister?: boolean;
  /** Subscribed events by name; absent: every event but ValidateContainerAdjustment. */
  events?: string[];
  /** ConfigureResponse.events exactly as sent (0 and unknown bits included). */
  rawEvents?: number;
  failurePolicy?: { failRequest?: boolean; keepConnected?: boolean };
  configureError?: string;
  synchronize?: Action;
  /** Per method: the action of the 1st, 2nd, ... call; the last one repeats. */
  on?: Record<string, Action[]>;
}

export interface External {
  idx: string;
  name: string;
  script: Script;
}

export type Step =
  | { event: string; request: Json }
  | { kill: string }
  | { unsolicited: string; update: Json[] }
  | { connect: External };

export interface DefaultValidatorConfig {
  enable: boolean;
  rejectOCIHookAdjustment?: boolean;
  rejectRuntimeDefaultSeccompAdjustment?: boolean;
  rejectUnconfinedSeccompAdjustment?: boolean;
  rejectCustomSeccompAdjustment?: boolean;
  rejectNamespaceAdjustment?: boolean;
  rejectSysctlAdjustment?: boolean;
  requiredPlugins?: string[];
  tolerateMissingPluginsAnnotation?: string;
}

export interface Scenario {
  description: string;
  requestTimeoutMs?: number;
  registrationTimeoutMs?: number;
  defaultValidator?: DefaultValidatorConfig;
  state?: { pods: Json[]; containers: Json[] };
  /** The synchronize callback fails with this error instead of synchronizing (Start then fails). */
  syncError?: string;
  updateFn?: { failed?: Json[]; error?: string };
  preinstalled?: { file: string; script: Script }[];
  conf?: Record<string, string>;
  pluginFiles?: { name: string; content: string; executable?: boolean }[];
  plugins?: External[];
  steps: Step[];
  /**
   * Error texts that depend on which of two things comes first (several validators rejecting at
   * once: the first to finish wins). The comparison maps each text of a set, in an event's error
   * or a logged line, to the set's first.
   */
  equivalentErrors?: string[][];
}

// --- fixtures ---------------------------------------------------------------------------------

/**
 * The request timeout of scenarios where a plugin times out. The healthy plugins beside it must
 * answer within it on a loaded machine, with a few scenarios running at once; a hang costs it
 * whatever it is, so it is generous.
 */
const HANG_REQUEST_MS = 5000;
/**
 * The registration timeout of the scenario where a plugin never registers: generous like
 * HANG_REQUEST_MS, and not the default (5 s), so that the one given is seen to be passed on.
 */
const HANG_REGISTRATION_MS = 6000;

export const POD0: Json = { id: "pod0", name: "sync-pod", uid: "uid-pod0", namespace: "default" };
export const POD: Json = { id: "pod1", name: "demo-pod", uid: "uid-pod1", namespace: "default", labels: { app: "demo" } };
export const CTR0: Json = {
  id: "ctr0",
  podSandboxId: "pod0",
  name: "sync-ctr",
  state: "CONTAINER_RUNNING",
  linux: { resources: { cpu: { shares: { value: "1024" } } } },
};
const STATE = { pods: [POD0, POD], containers: [CTR0] };

/** A container of pod1 being created, with `extra` fields on top. */
export function ctr(id: string, extra: Json = {}): Json {
  return { id, podSandboxId: "pod1", name: `demo-${id}`, state: "CONTAINER_CREATED", args: ["sleep", "inf"], env: ["A=1", "B=2"], ...extra };
}

function create(container: Json, pod: Json = POD): Step {
  return { event: "CreateContainer", request: { pod, container } };
}
function update(container: Json, linuxResources?: Json): Step {
  return { event: "UpdateContainer", request: { pod: POD, container, ...(linuxResources ? { linuxResources } : {}) } };
}
function podEvent(event: string, pod: Json = POD): Step {
  return { event, request: { pod } };
}
function ctrEvent(event: string, container: Json): Step {
  return { event, request: { pod: POD, container } };
}
function plugin(idx: string, name: string, script: Script = {}): External {
  return { idx, name, script };
}
/** A CreateContainer answer with this adjustment (and updates). */
function adjust(adj: Json, update?: Json[]): Action {
  return { response: { adjust: adj, ...(update ? { update } : {}) } };
}
/** An answer with a list of container updates (UpdateContainer, StopContainer, Synchronize). */
function updates(...u: Json[]): Action {
  return { response: { update: u } };
}
function res(resources: Json): Json {
  return { linux: { resources } };
}
function cu(containerId: string, resources: Json, ignoreFailure = false): Json {
  return { containerId, linux: { resources }, ...(ignoreFailure ? { ignoreFailure } : {}) };
}
const OK: Action = {};
const VALIDATOR: Script = { events: ["ValidateContainerAdjustment"] };
const CREATE_ONLY = ["CreateContainer"];
/** A plugin subscribed to CreateContainer only, answering its 1st, 2nd, ... call with `answers` (the last repeats). */
function creator(idx: string, name: string, ...answers: Action[]): External {
  return plugin(idx, name, { events: CREATE_ONLY, on: { CreateContainer: answers } });
}

// --- conflict matrix: two plugins claiming the same thing, one CreateContainer each ------------

const CONFLICTS: [string, Json, Json][] = [
  ["annotation", { annotations: { k: "a" } }, { annotations: { k: "b" } }],
  ["mount", { mounts: [{ destination: "/m", source: "/a", type: "bind" }] }, { mounts: [{ destination: "/m", source: "/b", type: "bind" }] }],
  ["env", { env: [{ key: "E", value: "a" }] }, { env: [{ key: "E", value: "b" }] }],
  ["args", { args: ["a"] }, { args: ["b"] }],
  ["device", { linux: { devices: [{ path: "/dev/x", type: "c", major: "1", minor: "3" }] } }, { linux: { devices: [{ path: "/dev/x", type: "c", major: "1", minor: "5" }] } }],
  ["cdi", { CDIDevices: [{ name: "vendor.com/gpu=0" }] }, { CDIDevices: [{ name: "vendor.com/gpu=0" }] }],
  ["rlimit", { rlimits: [{ type: "RLIMIT_NOFILE", hard: "10", soft: "10" }] }, { rlimits: [{ type: "RLIMIT_NOFILE", hard: "20", soft: "20" }] }],
  ["namespace", { linux: { namespaces: [{ type: "network", path: "/a" }] } }, { linux: { namespaces: [{ type: "network", path: "/b" }] } }],
  ["sysctl", { linux: { sysctl: { "net.x": "1" } } }, { linux: { sysctl: { "net.x": "2" } } }],
  ["net device", { linux: { netDevices: { eth0: { name: "a" } } } }, { linux: { netDevices: { eth0: { name: "b" } } } }],
  ["mem limit", { linux: { resources: { memory: { limit: { value: "1" } } } } }, { linux: { resources: { memory: { limit: { value: "2" } } } } }],
  ["mem reservation", { linux: { resources: { memory: { reservation: { value: "1" } } } } }, { linux: { resources: { memory: { reservation: { value: "2" } } } } }],
  ["mem swap", { linux: { resources: { memory: { swap: { value: "1" } } } } }, { linux: { resources: { memory: { swap: { value: "2" } } } } }],
  ["mem kernel", { linux: { resources: { memory: { kernel: { value: "1" } } } } }, { linux: { resources: { memory: { kernel: { value: "2" } } } } }],
  ["mem kernel tcp", { linux: { resources: { memory: { kernelTcp: { value: "1" } } } } }, { linux: { resources: { memory: { kernelTcp: { value: "2" } } } } }],
  ["mem swappiness", { linux: { resources: { memory: { swappiness: { value: "1" } } } } }, { linux: { resources: { memory: { swappiness: { value: "2" } } } } }],
  ["mem oom killer", { linux: { resources: { memory: { disableOomKiller: { value: true } } } } }, { linux: { resources: { memory: { disableOomKiller: { value: false } } } } }],
  ["mem hierarchy", { linux: { resources: { memory: { useHierarchy: { value: true } } } } }, { linux: { resources: { memory: { useHierarchy: { value: true } } } } }],
  ["cpu shares", { linux: { resources: { cpu: { shares: { value: "1" } } } } }, { linux: { resources: { cpu: { shares: { value: "2" } } } } }],
  ["cpu quota", { linux: { resources: { cpu: { quota: { value: "1" } } } } }, { linux: { resources: { cpu: { quota: { value: "2" } } } } }],
  ["cpu period", { linux: { resources: { cpu: { period: { value: "1" } } } } }, { linux: { resources: { cpu: { period: { value: "2" } } } } }],
  ["cpu rt runtime", { linux: { resources: { cpu: { realtimeRuntime: { value: "1" } } } } }, { linux: { resources: { cpu: { realtimeRuntime: { value: "2" } } } } }],
  ["cpu rt period", { linux: { resources: { cpu: { realtimePeriod: { value: "1" } } } } }, { linux: { resources: { cpu: { realtimePeriod: { value: "2" } } } } }],
  ["cpuset cpus", { linux: { resources: { cpu: { cpus: "0" } } } }, { linux: { resources: { cpu: { cpus: "1" } } } }],
  ["cpuset mems", { linux: { resources: { cpu: { mems: "0" } } } }, { linux: { resources: { cpu: { mems: "1" } } } }],
  ["hugepages", { linux: { resources: { hugepageLimits: [{ pageSize: "2MB", limit: "1" }] } } }, { linux: { resources: { hugepageLimits: [{ pageSize: "2MB", limit: "2" }] } } }],
  ["unified", { linux: { resources: { unified: { "memory.high": "1" } } } }, { linux: { resources: { unified: { "memory.high": "2" } } } }],
  ["blockio class", { linux: { resources: { blockioClass: { value: "a" } } } }, { linux: { resources: { blockioClass: { value: "b" } } } }],
  ["rdt class", { linux: { resources: { rdtClass: { value: "a" } } } }, { linux: { resources: { rdtClass: { value: "b" } } } }],
  ["pids", { linux: { resources: { pids: { limit: "1" } } } }, { linux: { resources: { pids: { limit: "2" } } } }],
  ["cgroups path", { linux: { cgroupsPath: "/a" } }, { linux: { cgroupsPath: "/b" } }],
  ["oom score adj", { linux: { oomScoreAdj: { value: 1 } } }, { linux: { oomScoreAdj: { value: 2 } } }],
  ["io priority", { linux: { ioPriority: { class: "IOPRIO_CLASS_RT", priority: 1 } } }, { linux: { ioPriority: { class: "IOPRIO_CLASS_BE", priority: 2 } } }],
  ["seccomp policy", { linux: { seccompPolicy: { defaultAction: "SCMP_ACT_ALLOW" } } }, { linux: { seccompPolicy: { defaultAction: "SCMP_ACT_ERRNO" } } }],
  ["scheduler", { linux: { scheduler: { policy: "SCHED_FIFO", priority: 1 } } }, { linux: { scheduler: { policy: "SCHED_RR", priority: 2 } } }],
  ["memory policy", { linux: { memoryPolicy: { mode: "MPOL_BIND", nodes: "0" } } }, { linux: { memoryPolicy: { mode: "MPOL_INTERLEAVE", nodes: "1" } } }],
  ["rdt clos id", { linux: { rdt: { closId: { value: "a" } } } }, { linux: { rdt: { closId: { value: "b" } } } }],
  ["rdt schemata", { linux: { rdt: { schemata: { value: ["L3:0=f"] } } } }, { linux: { rdt: { schemata: { value: ["L3:0=3"] } } } }],
  ["rdt monitoring", { linux: { rdt: { enableMonitoring: { value: true } } } }, { linux: { rdt: { enableMonitoring: { value: false } } } }],
  // The same plugin claiming one key twice conflicts with itself.
  ["self", { env: [{ key: "S", value: "1" }, { key: "S", value: "2" }] }, {}],
  // Hooks accumulate and never conflict.
  ["hooks", { hooks: { prestart: [{ path: "/a" }] } }, { hooks: { prestart: [{ path: "/b" }], poststop: [{ path: "/c" }] } }],
  // Device cgroup rules are appended without an owner.
  ["device rules", { linux: { resources: { devices: [{ allow: true, type: "c", access: "rwm" }] } } }, { linux: { resources: { devices: [{ allow: false, type: "b", access: "r" }] } } }],
];

/**
 * A plugin that hangs on its first CreateContainer under `failurePolicy` (absent: none), beside
 * one that answers; then a second CreateContainer and a RunPodSandbox show what became of it.
 */
function timingOut(description: string, failurePolicy?: Script["failurePolicy"]): Scenario {
  const events = ["CreateContainer", "RunPodSandbox"];
  return {
    description,
    state: STATE,
    requestTimeoutMs: HANG_REQUEST_MS,
    plugins: [
      plugin("10", "slow", { events: [...events], ...(failurePolicy ? { failurePolicy } : {}), on: { CreateContainer: [{ hang: true }, adjust({ annotations: { slow: "2" } })] } }),
      plugin("20", "ok", { events: [...events], on: { CreateContainer: [adjust({ annotations: { ok: "1" } })] } }),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), podEvent("RunPodSandbox")],
  };
}

// --- the scenarios ----------------------------------------------------------------------------

export const SCENARIOS: Record<string, Scenario> = {
  "merge-annotations": {
    description: "annotations: set, removal-only markers, the replace idiom, what later plugins see",
    state: STATE,
    plugins: [
      creator("10", "a", adjust({ annotations: { x: "a", y: "a" } })),
      creator("20", "b", adjust({ annotations: { "-y": "", z: "b", "-orig": "" } })),
      creator("30", "c", adjust({ annotations: { "-x": "", x: "c" } })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1", { annotations: { orig: "o", keep: "k" } }))],
  },

  "merge-mounts": {
    description: "mounts: additions, modification of an original mount, removal of an earlier plugin's and of an original mount",
    state: STATE,
    plugins: [
      creator("10", "a", adjust({ mounts: [{ destination: "/x", source: "/src/x", type: "bind", options: ["rbind", "ro"] }, { destination: "/y", source: "/src/y", type: "bind" }] })),
      creator("20", "b", adjust({ mounts: [{ destination: "-/x" }, { destination: "/orig-a", source: "/changed", type: "bind" }] })),
      creator("30", "c", adjust({ mounts: [{ destination: "-/orig-b" }] })),
      creator("40", "d", adjust({ mounts: [{ destination: "-/y" }, { destination: "/y", source: "/src/d", type: "bind" }] })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1", { mounts: [{ destination: "/orig-a", source: "/a", type: "bind" }, { destination: "/orig-b", source: "/b", type: "bind" }] }))],
  },

  "merge-mount-markers": {
    description: "several unmatched mount removal markers in one reply (Go appends them in map order: normalized)",
    state: STATE,
    plugins: [
      creator("10", "a", adjust({ mounts: [{ destination: "-/m1" }, { destination: "-/m2" }, { destination: "-/m3" }, { destination: "/m4", source: "/s", type: "bind" }] })),
      creator("20", "b", adjust({ mounts: [{ destination: "/m5", source: "/s", type: "bind" }] })),
    ],
    steps: [create(ctr("ctr1", { mounts: [{ destination: "/m1", source: "/a", type: "bind" }, { destination: "/m2", source: "/a", type: "bind" }] }))],
  },

  "merge-env": {
    description: "env: additions, modification, hiding an original variable, removing an earlier plugin's, taking one over",
    state: STATE,
    plugins: [
      creator("10", "a", adjust({ env: [{ key: "X", value: "a" }, { key: "Y", value: "a" }, { key: "T", value: "a" }] })),
      creator("20", "b", adjust({ env: [{ key: "-X" }, { key: "-A" }, { key: "B", value: "3" }] })),
      creator("30", "c", adjust({ env: [{ key: "-T" }, { key: "T", value: "c" }] })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1"))],
  },

  "merge-devices": {
    description: "devices: additions, modification of an original device, removals (never in the reply)",
    state: STATE,
    plugins: [
      creator("10", "a", adjust({ linux: { devices: [{ path: "/dev/a", type: "c", major: "1", minor: "1", fileMode: { value: 438 }, uid: { value: 0 }, gid: { value: 0 } }, { path: "/dev/b", type: "b", major: "8", minor: "0" }] } })),
      creator("20", "b", adjust({ linux: { devices: [{ path: "-/dev/a" }, { path: "-/dev/orig1" }, { path: "/dev/orig2", type: "c", major: "5", minor: "5" }] } })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1", { linux: { devices: [{ path: "/dev/orig1", type: "c", major: "1", minor: "3" }, { path: "/dev/orig2", type: "c", major: "1", minor: "5" }] } }))],
  },

  "merge-args-hooks-rlimits-cdi": {
    description: "args (replace, clear-and-take-over), hooks accumulating, rlimits and CDI devices appended",
    state: STATE,
    plugins: [
      creator("10", "a", adjust({ args: ["/bin/a", "--x"], hooks: { prestart: [{ path: "/hook/a", args: ["a"], env: ["E=1"], timeout: { value: 5 } }], createRuntime: [{ path: "/hook/cr" }] }, rlimits: [{ type: "RLIMIT_NOFILE", hard: "1024", soft: "512" }], CDIDevices: [{ name: "vendor.com/dev=a" }] }), adjust({ args: ["/bin/a"] })),
      creator("20", "b", adjust({ args: ["", "/bin/b"], hooks: { prestart: [{ path: "/hook/b" }], poststop: [{ path: "/hook/b-stop" }], createContainer: [{ path: "/hook/cc" }], startContainer: [{ path: "/hook/sc" }], poststart: [{ path: "/hook/ps" }] }, rlimits: [{ type: "RLIMIT_NPROC", hard: "10", soft: "10" }], CDIDevices: [{ name: "vendor.com/dev=b" }] }), adjust({ args: ["/bin/b"] })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2"))],
  },

  "merge-resources": {
    description: "every linux resource field from two plugins, and what the container then looks like",
    state: STATE,
    plugins: [
      creator("10", "a",
        adjust({
          linux: {
            resources: {
              memory: { limit: { value: "1000" }, reservation: { value: "500" }, swap: { value: "2000" }, kernel: { value: "10" }, kernelTcp: { value: "11" }, swappiness: { value: "60" }, disableOomKiller: { value: true }, useHierarchy: { value: false } },
              hugepageLimits: [{ pageSize: "2MB", limit: "4096" }],
              unified: { "memory.high": "900" },
              devices: [{ allow: true, type: "c", major: { value: "1" }, minor: { value: "3" }, access: "rwm" }],
            },
          },
        }),
      ),
      creator("20", "b",
        adjust({
          linux: {
            resources: {
              cpu: { shares: { value: "512" }, quota: { value: "-1" }, period: { value: "100000" }, realtimeRuntime: { value: "5" }, realtimePeriod: { value: "6" }, cpus: "0-1", mems: "0" },
              hugepageLimits: [{ pageSize: "1GB", limit: "1" }],
              unified: { "cpu.weight": "50" },
              blockioClass: { value: "gold" },
              rdtClass: { value: "silver" },
              pids: { limit: "100" },
            },
          },
        }),
      ),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1", { linux: { resources: { memory: { limit: { value: "5" } }, unified: { "io.max": "1" } } } }))],
  },

  "merge-linux": {
    description: "cgroups path, oom score, io priority, seccomp, namespaces, sysctl, net devices, scheduler, rdt, memory policy",
    state: STATE,
    plugins: [
      creator("10", "a",
        adjust({
          linux: {
            cgroupsPath: "/kubepods/a",
            oomScoreAdj: { value: -100 },
            ioPriority: { class: "IOPRIO_CLASS_BE", priority: 4 },
            namespaces: [{ type: "network", path: "/var/run/netns/a" }, { type: "-ipc" }],
            sysctl: { "net.core.somaxconn": "1024", "kernel.x": "1" },
            netDevices: { eth1: { name: "net1" } },
            rdt: { closId: { value: "a" }, schemata: { value: ["L3:0=ff"] } },
          },
        }),
      ),
      creator("20", "b",
        adjust({
          linux: {
            seccompPolicy: { defaultAction: "SCMP_ACT_ERRNO", defaultErrno: { value: 1 }, architectures: ["SCMP_ARCH_X86_64"], syscalls: [{ names: ["read"], action: "SCMP_ACT_ALLOW" }] },
            namespaces: [{ type: "uts", path: "/u" }],
            sysctl: { "-kernel.x": "", "-net.orig": "", "vm.y": "2" },
            netDevices: { "-eth1": {}, eth2: { name: "net2" } },
            scheduler: { policy: "SCHED_DEADLINE", nice: 1, priority: 2, flags: ["SCHED_FLAG_RECLAIM"], runtime: "3", deadline: "4", period: "5" },
            rdt: { remove: true, enableMonitoring: { value: true } },
            memoryPolicy: { mode: "MPOL_BIND", nodes: "0-1", flags: ["MPOL_F_STATIC_NODES"] },
          },
        }),
      ),
      creator("30", "c", adjust({ linux: { rdt: { remove: true } } })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [
      create(ctr("ctr1", { linux: { namespaces: [{ type: "pid" }, { type: "ipc" }, { type: "mount" }], sysctl: { "net.orig": "1" }, netDevices: { eth9: { name: "orig" } } } })),
    ],
  },

  "merge-evict-and-empty": {
    description: "an empty reply, a reply with only linux (the rdt quirk), and evictions (ignored)",
    state: STATE,
    plugins: [
      creator("10", "a", { response: {} }, adjust({ linux: {} }), { response: { evict: [{ containerId: "ctr0", reason: "make room" }] } }),
      plugin("20", "b", { events: ["CreateContainer", "UpdateContainer"], on: { UpdateContainer: [{ response: { evict: [{ containerId: "ctr0", reason: "x" }] } }] } }),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3")), update(ctr("ctr1"))],
  },

  conflicts: {
    description: "every conflict kind between two plugins (one CreateContainer each), a plugin against itself, and what never conflicts",
    state: STATE,
    plugins: [
      creator("10", "a", ...CONFLICTS.map(([, a]) => adjust(a))),
      creator("20", "b", ...CONFLICTS.map(([, , b]) => adjust(b))),
    ],
    steps: CONFLICTS.map((_, i) => create(ctr(`c${i}`))),
  },

  "conflict-aborts-and-later-plugins": {
    description: "a conflict aborts the event before later plugins run; the next event starts clean",
    state: STATE,
    plugins: [
      creator("10", "a", adjust({ env: [{ key: "K", value: "a" }], annotations: { n: "1" } })),
      creator("20", "b", adjust({ env: [{ key: "K", value: "b" }] }), OK),
      creator("30", "c", adjust({ annotations: { c: "1" } })),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2"))],
  },

  "updates-create": {
    description: "updates of other containers during CreateContainer: merging, ignore_failure, conflicts, the creating container",
    state: STATE,
    plugins: [
      creator("10", "a",
        adjust({}, [cu("ctr0", { memory: { limit: { value: "1000" } } })]),
        adjust({}, [cu("ctr0", { memory: { limit: { value: "1000" } } })]),
        adjust({}, [cu("ctr0", { memory: { limit: { value: "1000" } } })]),
        adjust({}, [cu("ctr4", { cpu: { shares: { value: "2" } } })]),
        adjust({}, [cu("ctr0", { pids: { limit: "7" }, unified: { "pids.max": "7" }, hugepageLimits: [{ pageSize: "2MB", limit: "1" }], blockioClass: { value: "b" }, rdtClass: { value: "r" }, devices: [{ allow: true, access: "r" }] })]),
        adjust({}, [{ containerId: "ctr0" }]),
      ),
      creator("20", "b",
        adjust({}, [cu("ctr0", { cpu: { shares: { value: "512" } } }, true), cu("ctr9", { cpu: { cpus: "1" } }, true)]),
        adjust({}, [cu("ctr0", { memory: { limit: { value: "2000" } } }, true), cu("ctr9", { memory: { limit: { value: "1" } } })]),
        adjust({}, [cu("ctr0", { memory: { limit: { value: "2000" } } })]),
        OK,
        adjust({}, [cu("ctr0", { cpu: { quota: { value: "5" } } })]),
        OK,
      ),
      creator("30", "c", OK, OK, OK, adjust({}, [cu("ctr4", {})])),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3")), create(ctr("ctr4")), create(ctr("ctr5")), create(ctr("ctr6"))],
  },

  "updates-update-stop": {
    description: "UpdateContainer (the target last, null when untouched, based on the request) and StopContainer updates, with the pids quirk",
    state: STATE,
    plugins: [
      plugin("10", "a", {
        events: ["UpdateContainer", "StopContainer"],
        on: {
          UpdateContainer: [
            OK,
            updates(cu("ctr1", { cpu: { shares: { value: "512" } } }), cu("ctr0", { memory: { limit: { value: "1" } } })),
            updates(cu("ctr1", { cpu: { shares: { value: "512" } } })),
            updates(cu("ctr1", { cpu: { quota: { value: "1" } } })),
          ],
          StopContainer: [updates(cu("ctr0", { cpu: { shares: { value: "2" } } }), cu("ctr1", { memory: { limit: { value: "3" } } }))],
        },
      }),
      plugin("20", "b", {
        events: ["UpdateContainer", "StopContainer"],
        on: {
          UpdateContainer: [
            OK,
            updates(cu("ctr9", { cpu: { cpus: "3" } }), cu("ctr1", { memory: { swap: { value: "9" } } })),
            updates(cu("ctr1", { cpu: { shares: { value: "256" } } }, true)),
            updates(cu("ctr1", { cpu: { period: { value: "1" } } })),
          ],
          StopContainer: [updates(cu("ctr1", { memory: { limit: { value: "4" } } }, true), cu("ctr8", { cpu: { mems: "1" } }))],
        },
      }),
    ],
    steps: [
      update(ctr("ctr1"), { cpu: { shares: { value: "100" } }, memory: { limit: { value: "200" } } }),
      update(ctr("ctr1"), { cpu: { shares: { value: "100" } }, memory: { limit: { value: "200" } } }),
      update(ctr("ctr1"), { cpu: { shares: { value: "100" } } }),
      update(ctr("ctr1"), { pids: { limit: "5" } }),
      update(ctr("ctr1")),
      ctrEvent("StopContainer", ctr("ctr1")),
    ],
  },

  validators: {
    description: "validators: approve, reject with and without a reason, fail, several rejecting; what they are sent",
    state: STATE,
    requestTimeoutMs: HANG_REQUEST_MS,
    plugins: [
      creator("10", "a", adjust({ annotations: { a: "1" }, env: [{ key: "-A" }, { key: "N", value: "1" }], hooks: { prestart: [{ path: "/h" }] } }, [cu("ctr0", { cpu: { shares: { value: "3" } } })])),
      plugin("15", "pods-only", { events: ["RunPodSandbox"] }),
      creator("20", "slow", { hang: true }),
      plugin("80", "v1", { events: ["ValidateContainerAdjustment"], on: { ValidateContainerAdjustment: [OK, { response: { reject: true, reason: "no way" } }, OK, { error: "broken" }, { response: { reject: true, reason: "v1 says no" } }, OK] } }),
      plugin("90", "v2", { events: ["ValidateContainerAdjustment"], on: { ValidateContainerAdjustment: [OK, OK, { response: { reject: true } }, OK, { response: { reject: true, reason: "v2 says no" } }, OK] } }),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3")), create(ctr("ctr4")), create(ctr("ctr5")), create(ctr("ctr6"))],
    equivalentErrors: [['validator "80-v1" rejected container adjustment, reason: v1 says no', 'validator "90-v2" rejected container adjustment, reason: v2 says no']],
  },

  "validator-failure-policy": {
    description: "a validator timing out always fails the event; keep_connected keeps it, otherwise it is dropped",
    state: STATE,
    requestTimeoutMs: HANG_REQUEST_MS,
    plugins: [
      creator("10", "a", adjust({ annotations: { a: "1" } })),
      plugin("80", "keep", { events: ["ValidateContainerAdjustment"], failurePolicy: { keepConnected: true }, on: { ValidateContainerAdjustment: [{ hang: true }, OK] } }),
      plugin("90", "drop", { events: ["ValidateContainerAdjustment"], failurePolicy: { failRequest: false }, on: { ValidateContainerAdjustment: [OK, { hang: true }, OK] } }),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3"))],
  },

  "validator-by-zero-mask": {
    description: "events 0 on the wire subscribes to everything, validation included",
    state: STATE,
    plugins: [creator("10", "a", adjust({ annotations: { a: "1" } })), plugin("50", "all", { rawEvents: 0 })],
    steps: [podEvent("RunPodSandbox"), create(ctr("ctr1")), ctrEvent("StartContainer", ctr("ctr1"))],
  },

  "default-validator-hooks": {
    description: "default validator: OCI hook injection by one plugin, by two, and none",
    state: STATE,
    defaultValidator: { enable: true, rejectOCIHookAdjustment: true },
    plugins: [
      creator("10", "a", adjust({ hooks: { prestart: [{ path: "/a" }] } }), adjust({ hooks: { poststop: [{ path: "/a" }] } }), OK),
      creator("20", "b", OK, adjust({ hooks: { prestart: [{ path: "/b" }] } }), adjust({ annotations: { b: "1" } })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3"))],
  },

  "default-validator-seccomp": {
    description: "default validator: seccomp policy adjustment by container profile, rejected for unconfined and custom only",
    state: STATE,
    defaultValidator: { enable: true, rejectUnconfinedSeccompAdjustment: true, rejectCustomSeccompAdjustment: true },
    plugins: [creator("10", "a", adjust({ linux: { seccompPolicy: { defaultAction: "SCMP_ACT_ALLOW" } } }))],
    steps: [
      create(ctr("ctr1")),
      create(ctr("ctr2", { linux: { seccompProfile: { profileType: "UNCONFINED" } } })),
      create(ctr("ctr3", { linux: { seccompProfile: { profileType: "RUNTIME_DEFAULT" } } })),
      create(ctr("ctr4", { linux: { seccompProfile: { profileType: "LOCALHOST", localhostRef: "profile.json" } } })),
    ],
  },

  "default-validator-seccomp-runtime-default": {
    description: "default validator: seccomp policy adjustment rejected for runtime-default containers only",
    state: STATE,
    defaultValidator: { enable: true, rejectRuntimeDefaultSeccompAdjustment: true },
    plugins: [creator("10", "a", adjust({ linux: { seccompPolicy: { defaultAction: "SCMP_ACT_ALLOW" } } }))],
    steps: [
      create(ctr("ctr1")),
      create(ctr("ctr3", { linux: { seccompProfile: { profileType: "RUNTIME_DEFAULT" } } })),
      create(ctr("ctr4", { linux: { seccompProfile: { profileType: "LOCALHOST", localhostRef: "p" } } })),
    ],
  },

  "default-validator-namespaces-sysctl": {
    description: "default validator: namespace and sysctl adjustments (one offender each: Go joins several in map order)",
    state: STATE,
    defaultValidator: { enable: true, rejectNamespaceAdjustment: true, rejectSysctlAdjustment: true },
    plugins: [
      creator("10", "a", adjust({ linux: { namespaces: [{ type: "ipc", path: "/x" }] } }), OK, adjust({ linux: { sysctl: { "-net.y": "" } } })),
      creator("20", "b", OK, adjust({ linux: { sysctl: { "net.x": "1" } } }), OK),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3"))],
  },

  "default-validator-required-plugins": {
    description: "default validator: required plugins from the configuration and from pod annotations, and tolerating their absence",
    state: STATE,
    defaultValidator: { enable: true, requiredPlugins: ["a"], tolerateMissingPluginsAnnotation: "tolerate-missing.example.com" },
    plugins: [plugin("10", "a", { events: CREATE_ONLY }), plugin("20", "b", { events: ["RunPodSandbox"] })],
    steps: [
      create(ctr("ctr1")),
      create(ctr("ctr2"), { ...POD, annotations: { "required-plugins.nri.io": "[b, 10-a]" } }),
      create(ctr("ctr3"), { ...POD, annotations: { "required-plugins.nri.io": "[x, 20-b, 30-y]" } }),
      create(ctr("ctr4"), { ...POD, annotations: { "required-plugins.nri.io/container.demo-ctr4": "[z]", "required-plugins.nri.io/pod": "[b]" } }),
      create(ctr("ctr5"), { ...POD, annotations: { "required-plugins.nri.io/pod": "[z]" } }),
      create(ctr("ctr6"), { ...POD, annotations: { "required-plugins.nri.io": "[z]", "tolerate-missing.example.com/container.demo-ctr6": "true" } }),
      create(ctr("ctr7"), { ...POD, annotations: { "required-plugins.nri.io": "[z]", "tolerate-missing.example.com": "false" } }),
      create(ctr("ctr8"), { ...POD, annotations: { "tolerate-missing.example.com/pod": "maybe" } }),
    ],
  },

  "default-validator-missing-required": {
    description: "default validator: a required plugin not connected, alone and with a second one",
    state: STATE,
    defaultValidator: { enable: true, requiredPlugins: ["a", "00-default-validator"] },
    plugins: [plugin("10", "b", { events: CREATE_ONLY })],
    steps: [create(ctr("ctr1")), create(ctr("ctr2"), { ...POD, annotations: { "required-plugins.nri.io": "[c]" } })],
  },

  "failure-policy-default": timingOut("a plugin timing out with no policy: the event proceeds without it and it is dropped"),
  "failure-policy-fail-request": timingOut("a plugin timing out with fail_request: the event fails and it is dropped", { failRequest: true }),
  "failure-policy-keep-connected": timingOut("a plugin timing out with keep_connected: the event proceeds without it and it stays", { keepConnected: true }),
  "failure-policy-both": timingOut("a plugin timing out with fail_request and keep_connected: the event fails and it stays", { failRequest: true, keepConnected: true }),

  "failure-policy-other-events": {
    description: "timeouts on events without a response, under each policy",
    state: STATE,
    requestTimeoutMs: HANG_REQUEST_MS,
    plugins: [
      plugin("10", "keep", { events: ["RunPodSandbox", "StopContainer"], failurePolicy: { keepConnected: true }, on: { RunPodSandbox: [{ hang: true }, OK], StopContainer: [{ hang: true }, OK] } }),
      plugin("20", "fail", { events: ["RunPodSandbox", "StopContainer"], failurePolicy: { failRequest: true, keepConnected: true }, on: { RunPodSandbox: [OK, { hang: true }, OK] } }),
      plugin("30", "last", { events: ["RunPodSandbox", "StopContainer"], on: { StopContainer: [updates(cu("ctr0", { cpu: { shares: { value: "7" } } }))] } }),
    ],
    steps: [podEvent("RunPodSandbox"), podEvent("RunPodSandbox"), podEvent("RunPodSandbox"), ctrEvent("StopContainer", ctr("ctr1"))],
  },

  "plugin-errors": {
    description: "errors a plugin returns are not failures: the event fails whatever the policy, the plugin stays; a bad answer",
    state: STATE,
    plugins: [
      plugin("10", "err", {
        events: ["CreateContainer", "RunPodSandbox", "StopPodSandbox"],
        failurePolicy: { keepConnected: false, failRequest: false },
        on: {
          CreateContainer: [{ error: "nope" }, { error: "late", code: 4 }, { error: "gone", code: 14 }, { undecodable: true }, OK],
          RunPodSandbox: [{ error: "denied", code: 7 }, OK],
          StopPodSandbox: [{ error: "cannot stop" }],
        },
      }),
      plugin("20", "next", { events: ["CreateContainer", "RunPodSandbox", "StopPodSandbox"], on: { CreateContainer: [adjust({ annotations: { next: "1" } })] } }),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3")), create(ctr("ctr4")), create(ctr("ctr5")), podEvent("RunPodSandbox"), podEvent("RunPodSandbox"), podEvent("StopPodSandbox")],
  },

  "plugin-exits-during-event": {
    description: "a plugin whose process ends while it handles an event: a lost connection drops it, fail_request decides the event",
    state: STATE,
    plugins: [
      plugin("10", "quits", { events: CREATE_ONLY, failurePolicy: { keepConnected: true }, on: { CreateContainer: [{ exit: true }] } }),
      plugin("20", "strict", { events: CREATE_ONLY, failurePolicy: { failRequest: true, keepConnected: true }, on: { CreateContainer: [adjust({ annotations: { s: "1" } }), { exit: true }] } }),
      creator("30", "ok", adjust({ annotations: { ok: "1" } })),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2")), create(ctr("ctr3"))],
  },

  "plugin-exits-between-events": {
    description: "a plugin gone between events is skipped silently, even with fail_request; a new one joins",
    state: STATE,
    plugins: [
      plugin("10", "gone", { events: ["CreateContainer", "RunPodSandbox"], failurePolicy: { failRequest: true }, on: { CreateContainer: [adjust({ annotations: { gone: "1" } })] } }),
      plugin("20", "stays", { events: ["CreateContainer", "RunPodSandbox"], on: { CreateContainer: [adjust({ annotations: { stays: "1" } })] } }),
    ],
    steps: [
      create(ctr("ctr1")),
      { kill: "10-gone" },
      create(ctr("ctr2")),
      podEvent("RunPodSandbox"),
      { connect: plugin("05", "late", { events: ["CreateContainer", "RunPodSandbox"], on: { CreateContainer: [adjust({ annotations: { late: "1" } })] } }) },
      create(ctr("ctr3")),
    ],
  },

  "lifecycle-events": {
    description: "every lifecycle event in order; the first error aborts the loop; StateChange for a plugin without the dedicated call",
    state: STATE,
    plugins: [
      plugin("10", "a", { on: { StopPodSandbox: [OK, { error: "stop failed" }] } }),
      // Answers UNIMPLEMENTED once: from then on its pod and container events travel as StateChange.
      plugin("15", "legacy", { on: { RunPodSandbox: [{ error: "unimplemented here", code: 12 }, OK] } }),
      plugin("20", "b", { on: { UpdatePodSandbox: [{ response: {} }] } }),
      plugin("30", "c", { events: ["RemovePodSandbox", "RemoveContainer"] }),
    ],
    steps: [
      podEvent("RunPodSandbox"),
      create(ctr("ctr1")),
      ctrEvent("PostCreateContainer", ctr("ctr1", { state: "CONTAINER_CREATED" })),
      ctrEvent("StartContainer", ctr("ctr1")),
      ctrEvent("PostStartContainer", ctr("ctr1", { state: "CONTAINER_RUNNING" })),
      update(ctr("ctr1", { state: "CONTAINER_RUNNING" }), { cpu: { shares: { value: "2" } } }),
      ctrEvent("PostUpdateContainer", ctr("ctr1", { state: "CONTAINER_RUNNING" })),
      ctrEvent("StopContainer", ctr("ctr1", { state: "CONTAINER_STOPPED" })),
      ctrEvent("RemoveContainer", ctr("ctr1", { state: "CONTAINER_STOPPED" })),
      { event: "UpdatePodSandbox", request: { pod: POD, overheadLinuxResources: { cpu: { shares: { value: "1" } } }, linuxResources: { memory: { limit: { value: "9" } } } } },
      podEvent("PostUpdatePodSandbox"),
      podEvent("StopPodSandbox"),
      podEvent("StopPodSandbox"),
      podEvent("RemovePodSandbox"),
      podEvent("RunPodSandbox"),
    ],
  },

  "event-masks": {
    description: "each plugin gets exactly the events it subscribed to",
    state: STATE,
    plugins: [
      plugin("10", "pods", { events: ["RunPodSandbox", "StopPodSandbox", "RemovePodSandbox"] }),
      plugin("20", "ctrs", { events: ["CreateContainer", "StartContainer", "StopContainer", "RemoveContainer"] }),
      plugin("30", "updates", { events: ["UpdateContainer", "PostUpdateContainer", "UpdatePodSandbox", "PostUpdatePodSandbox"] }),
      plugin("40", "posts", { events: ["PostCreateContainer", "PostStartContainer"] }),
    ],
    steps: [
      podEvent("RunPodSandbox"),
      create(ctr("ctr1")),
      ctrEvent("PostCreateContainer", ctr("ctr1")),
      ctrEvent("StartContainer", ctr("ctr1")),
      ctrEvent("PostStartContainer", ctr("ctr1")),
      update(ctr("ctr1")),
      ctrEvent("PostUpdateContainer", ctr("ctr1")),
      ctrEvent("StopContainer", ctr("ctr1")),
      ctrEvent("RemoveContainer", ctr("ctr1")),
      podEvent("UpdatePodSandbox"),
      podEvent("PostUpdatePodSandbox"),
      podEvent("StopPodSandbox"),
      podEvent("RemovePodSandbox"),
    ],
  },

  "ordering-and-duplicates": {
    description: "invocation by index whatever the connection order; a duplicate name is a second plugin",
    state: STATE,
    plugins: [
      creator("30", "c", adjust({ env: [{ key: "C", value: "c" }] }), OK),
      creator("10", "a", adjust({ env: [{ key: "A1", value: "a" }] }), adjust({ env: [{ key: "D", value: "1" }] })),
      creator("20", "b", adjust({ env: [{ key: "B", value: "b" }] }), OK),
      creator("10", "a", adjust({ env: [{ key: "A2", value: "a" }] }), adjust({ env: [{ key: "D", value: "2" }] })),
      plugin("90", "v", VALIDATOR),
    ],
    steps: [create(ctr("ctr1")), create(ctr("ctr2"))],
  },

  registration: {
    description: "plugins refused at registration or configuration, a registration timeout; the others keep working",
    state: STATE,
    registrationTimeoutMs: HANG_REGISTRATION_MS,
    plugins: [
      plugin("10", "bad-name", { registerName: "bad name" }),
      plugin("11", "empty-name", { registerName: "" }),
      plugin("12", "bad-idx", { registerIdx: "1x" }),
      plugin("13", "long-idx", { registerIdx: "123" }),
      plugin("14", "bad-mask", { rawEvents: 1 << 20 }),
      plugin("15", "configure-fails", { configureError: "no configuration for me" }),
      plugin("16", "never-registers", { hangRegister: true }),
      plugin("17", "sync-fails", { synchronize: { error: "cannot sync" } }),
      creator("20", "good", adjust({ annotations: { good: "1" } })),
    ],
    steps: [create(ctr("ctr1"))],
    // pkg/stub closes its connection as it answers a failed Configure (see preinstalled-failing).
    equivalentErrors: [["failed to start external plugin: failed to configure plugin: rpc error: code = Unknown desc = no configuration for me", "failed to start external plugin: failed to configure plugin: ttrpc: closed"]],
  },

  synchronize: {
    description: "updates returned from Synchronize reach the synchronize callback unmerged",
    state: STATE,
    plugins: [
      plugin("10", "a", { events: CREATE_ONLY, synchronize: updates(cu("ctr0", { cpu: { shares: { value: "2" } } }), cu("ctr0", { cpu: { shares: { value: "3" } } }, true)) }),
      plugin("20", "b", { events: CREATE_ONLY, synchronize: updates(cu("ctr9", { memory: { limit: { value: "1" } } })) }),
      plugin("30", "c", { events: CREATE_ONLY }),
    ],
    steps: [create(ctr("ctr1"))],
  },

  "synchronize-timeout": {
    description: "a plugin that does not answer Synchronize in time is refused; the others are not held up",
    state: STATE,
    requestTimeoutMs: HANG_REQUEST_MS,
    plugins: [
      plugin("10", "hangs", { events: CREATE_ONLY, synchronize: { hang: true } }),
      creator("20", "ok", adjust({ annotations: { ok: "1" } })),
    ],
    steps: [create(ctr("ctr1"))],
  },

  unsolicited: {
    description: "UpdateContainers from a plugin, during an event and between events, reach the update callback as sent",
    state: STATE,
    updateFn: { failed: [cu("ctr0", { cpu: { shares: { value: "2" } } })] },
    plugins: [
      plugin("10", "a", { events: ["StartContainer", "CreateContainer"], on: { StartContainer: [{ updateContainers: [cu("ctr0", { cpu: { shares: { value: "2" } } }), cu("ctr1", { memory: { limit: { value: "5" } } }, true)] }], CreateContainer: [{ updateContainers: [cu("ctr0", { cpu: { cpus: "1" } })], ...adjust({ annotations: { a: "1" } }) }] } }),
    ],
    steps: [
      ctrEvent("StartContainer", ctr("ctr1")),
      { unsolicited: "10-a", update: [cu("ctr0", { memory: { limit: { value: "8" } } })] },
      create(ctr("ctr2")),
      { unsolicited: "10-a", update: [] },
    ],
  },

  "unsolicited-error": {
    description: "the update callback's error reaches the plugin",
    state: STATE,
    updateFn: { error: "cannot update now" },
    plugins: [plugin("10", "a", { events: ["StartContainer"] })],
    steps: [{ unsolicited: "10-a", update: [cu("ctr0", { cpu: { shares: { value: "2" } } })] }],
  },

  preinstalled: {
    description: "plugins launched from the plugin directory: environment, fd 3, configuration lookup, synchronize updates, with an external one",
    state: STATE,
    conf: {
      "10-pre.conf": "config for 10-pre",
      "pre.conf": "config for any pre (unused: 10-pre.conf wins)",
      "other.conf": "config for other",
      "40-unused.conf": "no plugin of that name",
    },
    pluginFiles: [
      { name: "README", content: "not executable: skipped" },
      { name: "99-not-executable", content: "#!/bin/sh\nexit 1\n" },
    ],
    preinstalled: [
      { file: "10-pre", script: { events: CREATE_ONLY, synchronize: updates(cu("ctr0", { cpu: { shares: { value: "9" } } })), on: { CreateContainer: [adjust({ annotations: { pre: "1" } })] } } },
      { file: "20-other", script: { events: ["CreateContainer", "RunPodSandbox"], on: { CreateContainer: [adjust({ env: [{ key: "OTHER", value: "1" }] })] } } },
      { file: "30-plain", script: { events: ["RunPodSandbox"] } },
    ],
    plugins: [creator("25", "ext", adjust({ annotations: { ext: "1" } }))],
    steps: [podEvent("RunPodSandbox"), create(ctr("ctr1"))],
  },

  "preinstalled-failing": {
    description: "pre-installed plugins failing configuration or synchronization are skipped; the rest start",
    state: STATE,
    // pkg/stub closes its connection as it answers a failed Configure: a runtime reads the answer
    // or sees the connection closed first, whichever comes.
    equivalentErrors: [
      [
        'failed to start pre-installed NRI plugin "bad-config": failed to configure plugin: rpc error: code = Unknown desc = bad config',
        'failed to start pre-installed NRI plugin "bad-config": failed to configure plugin: ttrpc: closed',
      ],
    ],
    preinstalled: [
      { file: "10-bad-config", script: { configureError: "bad config" } },
      { file: "20-bad-mask", script: { rawEvents: 1 << 16 } },
      { file: "30-bad-sync", script: { synchronize: { error: "no sync" } } },
      { file: "40-good", script: { events: CREATE_ONLY, on: { CreateContainer: [adjust({ annotations: { good: "1" } })] } } },
    ],
    steps: [create(ctr("ctr1"))],
  },

  "start-sync-error": {
    description: "a synchronize callback that fails fails Start",
    syncError: "state unavailable",
    steps: [],
  },

  "preinstalled-bad-file-name": {
    description: "an executable in the plugin directory without an NN-name file name fails Start",
    state: STATE,
    pluginFiles: [{ name: "badname", content: "#!/bin/sh\nexit 0\n", executable: true }],
    steps: [],
  },
};
