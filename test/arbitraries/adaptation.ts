import type { JsonValue } from "@bufbuild/protobuf";
import fc from "fast-check";
import type { DefaultValidatorConfig } from "../../src/runtime/default-validator.js";
import { CONTAINER, POD } from "../runtime/adapt-scenarios.js";
import type { Scenario, ScriptedPlugin } from "../runtime/adapt-scenario.js";

/**
 * Random runtime-adaptation scenarios for 1–3 plugins: adjustments of every kind, removal
 * markers, replace idioms, updates with and without ignore_failure, validators and default
 * validator configurations. Keys come from small pools so that plugins collide often. Within one
 * map (annotations, sysctls, net devices, unified) a plugin sets at most one key another plugin
 * may also set, so the key Go reports on a conflict does not depend on its random map order.
 */

type Obj = Record<string, JsonValue>;

/** `arb` with probability `p`, else undefined. */
const opt = <T>(arb: fc.Arbitrary<T>, p = 0.25): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: Math.round(100 * (1 - p)) }, { arbitrary: arb, weight: Math.round(100 * p) });

/** Drops undefined properties, so the JSON says only what was generated. */
function defined(o: Record<string, JsonValue | undefined>): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

const small = fc.integer({ min: 0, max: 3 }).map(String);
const wrapped = small.map((value) => ({ value }));

/**
 * A map adjustment for plugin `n`: maybe the shared key, maybe the plugin's own keys, and
 * removal markers of any key (the shared key's marker with the shared key is the replace idiom).
 */
function keyedMap(n: string, shared: string, original: string, value: fc.Arbitrary<JsonValue>, marker: JsonValue | undefined): fc.Arbitrary<Obj | undefined> {
  const own = n === "" ? [] : [`${n}1`, `${n}2`].map((k) => `${shared}.${k}`);
  const others = ["a1", "b1", "c1"].map((k) => `${shared}.${k}`);
  const markers = marker === undefined ? [] : [shared, original, ...own, ...others].map((k) => `-${k}`);
  return opt(
    fc.record({ set: fc.subarray([shared, ...own]), del: fc.subarray(markers, { maxLength: Math.min(3, markers.length) }), values: fc.array(value, { minLength: 3, maxLength: 3 }) }).map(({ set, del, values }) => {
      const m: Obj = {};
      set.forEach((k, i) => (m[k] = values[i]!));
      for (const k of del) m[k] = marker!;
      return m;
    }),
    0.3,
  );
}

const pick = <T>(...xs: T[]) => fc.constantFrom(...xs);

const memoryArb: fc.Arbitrary<Obj> = fc
  .record(
    { limit: wrapped, reservation: wrapped, swap: wrapped, kernel: wrapped, kernelTcp: wrapped, swappiness: wrapped, disableOomKiller: fc.boolean().map((value) => ({ value })), useHierarchy: fc.boolean().map((value) => ({ value })) },
    { requiredKeys: [] },
  )
  .map((r) => r as Obj);

const cpuArb: fc.Arbitrary<Obj> = fc
  .record({ shares: wrapped, quota: wrapped, period: wrapped, realtimeRuntime: wrapped, realtimePeriod: wrapped, cpus: pick("0", "1-2"), mems: pick("0", "1") }, { requiredKeys: [] })
  .map((r) => r as Obj);

function resourcesArb(n: string, withDevices: boolean): fc.Arbitrary<Obj> {
  return fc
    .record({
      memory: opt(memoryArb, 0.4),
      cpu: opt(cpuArb, 0.4),
      hugepageLimits: opt(fc.array(fc.record({ pageSize: pick("2MB", "1GB"), limit: small }), { maxLength: 2 })),
      // Unified keys have no removal markers; in updates only the shared key, as a plugin's two
      // updates of one container would otherwise conflict on several keys at once.
      unified: keyedMap(withDevices ? n : "", "u", "orig", small, undefined),
      blockioClass: opt(pick("gold", "").map((value) => ({ value })), 0.15),
      rdtClass: opt(pick("r1", "").map((value) => ({ value })), 0.15),
      pids: opt(small.map((limit) => ({ limit })), 0.15),
      devices: withDevices ? opt(fc.array(fc.record({ allow: fc.boolean(), type: pick("a", "c"), access: pick("rwm", "r") }), { minLength: 1, maxLength: 2 }), 0.15) : fc.constant(undefined),
    })
    .map(defined);
}

function listOf(keys: string[], build: (key: string) => fc.Arbitrary<Obj>, maxLength = 3): fc.Arbitrary<Obj[] | undefined> {
  return opt(fc.array(pick(...keys).chain(build), { minLength: 1, maxLength }), 0.3);
}

const hookArb = fc.record({ path: pick("/h1", "/h2"), args: opt(fc.array(pick("x", "y"), { maxLength: 2 })) }).map(defined);

function adjustArb(n: string): fc.Arbitrary<Obj> {
  const N = n.toUpperCase();
  return fc
    .record({
      annotations: keyedMap(n, "k", "orig", pick("1", "2"), ""),
      mounts: listOf(["/k", `/${n}1`, "/orig", "-/k", "-/orig", "-/a1", "-/b1", "-/none"], (destination) => fc.record({ destination: fc.constant(destination), source: pick("/s1", "/s2") })),
      env: listOf(["K", `${N}1`, "PATH", "-K", "-ORIG", "-A1", "-B1"], (key) => fc.record({ key: fc.constant(key), value: pick("1", "2") })),
      args: opt(pick<JsonValue>(["x"], ["", "y"], [""], ["", ""]), 0.15),
      hooks: opt(fc.record({ prestart: fc.array(hookArb, { maxLength: 2 }), poststop: fc.array(hookArb, { maxLength: 1 }), createRuntime: fc.array(hookArb, { maxLength: 1 }) }, { requiredKeys: [] }), 0.2),
      linux: opt(
        fc
          .record({
            devices: listOf(["/dev/k", `/dev/${n}1`, "/dev/orig", "-/dev/k", "-/dev/orig", "-/dev/a1"], (path) => fc.record({ path: fc.constant(path), type: pick("c", "b") })),
            resources: opt(resourcesArb(n, true), 0.4),
            cgroupsPath: opt(pick("/cg1", "/cg2"), 0.1),
            oomScoreAdj: opt(fc.integer({ min: -5, max: 5 }).map((value) => ({ value })), 0.1),
            ioPriority: opt(fc.record({ class: pick("IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE"), priority: fc.integer({ min: 0, max: 7 }) }), 0.1),
            seccompPolicy: opt(fc.record({ defaultAction: pick("SCMP_ACT_ERRNO", "SCMP_ACT_LOG") }), 0.1),
            namespaces: listOf(["net", "ipc", "uts", "-ipc", "-net", "-pid"], (type) => fc.record({ type: fc.constant(type), path: pick("", "/ns") }).map(defined), 2),
            sysctl: keyedMap(n, "net", "net.orig", pick("0", "1"), ""),
            netDevices: keyedMap(n, "eth", "eth-orig", fc.record({ name: pick("n0", "n1") }), {}),
            scheduler: opt(fc.record({ policy: pick("SCHED_FIFO", "SCHED_RR"), priority: fc.integer({ min: 0, max: 9 }) }), 0.1),
            rdt: opt(
              fc.record({ closId: wrapped, schemata: fc.array(pick("L3:0=f", "MB:0=50"), { maxLength: 2 }).map((value) => ({ value })), enableMonitoring: fc.boolean().map((value) => ({ value })), remove: fc.boolean() }, { requiredKeys: [] }),
              0.15,
            ),
            memoryPolicy: opt(fc.record({ mode: pick("MPOL_BIND", "MPOL_INTERLEAVE"), nodes: pick("0", "0-1") }), 0.1),
          })
          .map((l) => defined(l as Record<string, JsonValue | undefined>)),
        0.5,
      ),
      rlimits: listOf(["RLIMIT_NOFILE", "RLIMIT_NPROC"], (type) => fc.record({ type: fc.constant(type), hard: small, soft: small }), 2),
      CDIDevices: listOf(["v/g=0", "v/g=1"], (name) => fc.constant({ name }), 2),
    })
    .map((a) => defined(a as Record<string, JsonValue | undefined>));
}

function updatesArb(n: string, targets: string[]): fc.Arbitrary<Obj[]> {
  return fc.array(
    fc.record({ containerId: pick(...targets), resources: opt(resourcesArb(n, false), 0.85), ignoreFailure: fc.boolean() }).map(({ containerId, resources, ignoreFailure }) =>
      defined({ containerId, linux: resources === undefined ? undefined : { resources }, ignoreFailure: ignoreFailure || undefined }),
    ),
    { maxLength: 2 },
  );
}

const evictArb = opt(fc.array(fc.record({ containerId: pick("ctr1", "ctr9"), reason: pick("r") }), { minLength: 1, maxLength: 1 }), 0.1);

function pluginsArb(replyFor: (n: string) => fc.Arbitrary<JsonValue>, validators: boolean): fc.Arbitrary<ScriptedPlugin[]> {
  const one = (idx: string, name: string): fc.Arbitrary<ScriptedPlugin> =>
    fc
      .record({
        kind: fc.constantFrom("reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "nil", "error"),
        reply: replyFor(name),
        validate: validators ? opt(fc.record({ reject: fc.boolean(), reason: pick("", "nope") }), 0.2) : fc.constant(undefined),
        unsubscribed: fc.integer({ min: 0, max: 9 }),
      })
      .map(({ kind, reply, validate, unsubscribed }) => {
        const p: ScriptedPlugin = { idx, name };
        if (unsubscribed === 0) p.handles = false;
        else if (kind === "reply") p.reply = reply;
        else if (kind === "nil") p.reply = null;
        else p.error = `${name} failed`;
        if (validate !== undefined) p.validate = validate;
        return p;
      });
  return fc
    .subarray(
      [
        ["10", "a"],
        ["20", "b"],
        ["30", "c"],
      ] as const,
      { minLength: 1 },
    )
    .chain((ids) => fc.tuple(...ids.map(([idx, name]) => one(idx, name))));
}

const defaultValidatorArb: fc.Arbitrary<DefaultValidatorConfig | undefined> = opt(
  fc.record(
    {
      enable: fc.constant(true),
      rejectOCIHookAdjustment: fc.boolean(),
      rejectRuntimeDefaultSeccompAdjustment: fc.boolean(),
      rejectUnconfinedSeccompAdjustment: fc.boolean(),
      rejectCustomSeccompAdjustment: fc.boolean(),
      rejectNamespaceAdjustment: fc.boolean(),
      rejectSysctlAdjustment: fc.boolean(),
      requiredPlugins: fc.subarray(["a", "20-b", "x"], { maxLength: 2 }),
      tolerateMissingPluginsAnnotation: pick("", "tolerate.example.com"),
    },
    { requiredKeys: ["enable"] },
  ),
  0.3,
);

const podAnnotationsArb: fc.Arbitrary<Obj> = fc
  .record(
    {
      "required-plugins.noderesource.dev/container.c": pick("[a]", "- b\n- x", "[]"),
      "required-plugins.noderesource.dev": pick("[c]", "x", "~"),
      "tolerate.example.com/pod": pick("true", "false", "maybe"),
    },
    { requiredKeys: [] },
  )
  .map((r) => r as Obj);

const createArb: fc.Arbitrary<Scenario> = fc
  .record({
    plugins: pluginsArb((n) => fc.record({ adjust: adjustArb(n), update: updatesArb(n, ["ctr1", "ctr2", "ctr1", "ctr2", "ctr0"]), evict: evictArb }).map((r) => defined(r)), true),
    defaultValidator: defaultValidatorArb,
    profile: opt(pick("RUNTIME_DEFAULT", "UNCONFINED", "LOCALHOST"), 0.6),
    annotations: podAnnotationsArb,
  })
  .map(({ plugins, defaultValidator, profile, annotations }) => {
    const linux = { ...CONTAINER.linux, ...(profile === undefined ? {} : { seccompProfile: { profileType: profile } }) };
    const s: Scenario = { event: "CreateContainer", request: { pod: { ...POD, annotations }, container: { ...CONTAINER, linux } }, plugins };
    if (defaultValidator !== undefined) s.defaultValidator = defaultValidator;
    return s;
  });

const requestResourcesArb: fc.Arbitrary<Obj | undefined> = opt(
  fc.record({ memory: opt(memoryArb, 0.5), cpu: opt(cpuArb, 0.5), pids: opt(small.map((limit) => ({ limit })), 0.3), unified: opt(fc.constant({ u: "1" }), 0.2) }).map(defined),
  0.7,
);

const updateArb: fc.Arbitrary<Scenario> = fc
  .record({
    plugins: pluginsArb((n) => fc.record({ update: updatesArb(n, ["ctr1", "ctr1", "ctr2", "ctr3"]), evict: evictArb }).map((r) => defined(r)), false),
    resources: requestResourcesArb,
  })
  .map(({ plugins, resources }) => ({ event: "UpdateContainer", request: defined({ pod: POD, container: { id: "ctr1", name: "c1" }, linuxResources: resources }), plugins }));

const stopArb: fc.Arbitrary<Scenario> = pluginsArb((n) => fc.record({ update: updatesArb(n, ["ctr1", "ctr2", "ctr3"]) }), false).map((plugins) => ({
  event: "StopContainer",
  request: { pod: POD, container: { id: "ctr1", name: "c1" } },
  plugins,
}));

/** A random CreateContainer, UpdateContainer or StopContainer scenario. */
export const scenarioArb: fc.Arbitrary<Scenario> = fc.oneof({ arbitrary: createArb, weight: 6 }, { arbitrary: updateArb, weight: 3 }, { arbitrary: stopArb, weight: 1 });
