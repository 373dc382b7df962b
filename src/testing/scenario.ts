import { type JsonValue, fromJson } from "@bufbuild/protobuf";
import { type Container, type ContainerAdjustment, ContainerAdjustmentSchema, ContainerSchema, type ContainerUpdate, ContainerUpdateSchema, type PodSandbox, PodSandboxSchema } from "../../gen/v1beta1/api_pb.js";
import { checkPluginIndex, checkPluginName } from "../api/identity.js";
import { scriptContainer, scriptPod, syncContainer, syncPod } from "./script-objects.js";

/**
 * What the conformance script's events are about: the pod and container it creates, runs,
 * updates and removes, and the pods and containers present before the plugin connects (what
 * Synchronize reports). A plugin whose paths depend on annotations, labels or names gets them
 * here, so that `nri-wire test-plugin` exercises those paths.
 */
export interface Scenario {
  readonly pod: PodSandbox;
  /** The container of the script (its podSandboxId is the pod's id). */
  readonly container: Container;
  readonly existing: { readonly pods: readonly PodSandbox[]; readonly containers: readonly Container[] };
  /**
   * Other plugins of the runtime, each with its answer to the script's CreateContainer: merged
   * with the plugin's own in index order (the container the plugin is sent is adjusted by those
   * before it), and what a validator under test is asked to validate.
   */
  readonly others: readonly OtherPlugin[];
}

/** Another plugin of the scenario and what it answers CreateContainer with. */
export interface OtherPlugin {
  readonly name: string;
  readonly idx: string;
  readonly adjust?: ContainerAdjustment;
  readonly update: readonly ContainerUpdate[];
}

/** The scenario file's format, documented in `nri-wire test-plugin --help`. */
export const SCENARIO_FORMAT = `A scenario file is JSON with any of these keys (messages in protobuf JSON, v1beta1 field names):
  "pod"        the pod of the script's events (a PodSandbox), merged over the default
               {"id": "pod1", "name": "test-pod", "uid": "uid-pod1", "namespace": "default"}
  "container"  its container (a Container), merged over the default {"id": "ctr1",
               "name": "test-ctr", "state": "CONTAINER_CREATED", "args": ["sleep", "inf"], ...};
               its podSandboxId is always the pod's id
  "existing"   {"pods": [...], "containers": [...]}: what exists before the plugin connects
               (default one pod "pod0" and its running container "ctr0")
  "others"     [{"name": "N", "idx": "NN", "adjust": {...}, "update": [...]}, ...]: other plugins
               and their CreateContainer answers (a ContainerAdjustment, ContainerUpdates),
               merged with the plugin's in index order: what a validator is asked to validate
For example: {"pod": {"annotations": {"ulimits.nri-wire.dev/container.app": "[...]"}},
"container": {"name": "app"}}`;

const KEYS = ["pod", "container", "existing", "others"];
const OTHER_KEYS = ["name", "idx", "adjust", "update"];

function object(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error(`${where}: not a JSON object`);
  return v as Record<string, unknown>;
}

function list(v: unknown, where: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new Error(`${where}: not a JSON array`);
  return v;
}

function message<T>(read: () => T, where: string): T {
  try {
    return read();
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}

/** The default scenario: what the script uses without a file. */
export const DEFAULT_SCENARIO: Scenario = parseScenario({});

/** A scenario from a scenario file's parsed JSON; throws naming the key that is wrong. */
export function parseScenario(json: unknown): Scenario {
  const top = object(json, "scenario");
  for (const k of Object.keys(top)) if (!KEYS.includes(k)) throw new Error(`scenario: unknown key "${k}": use ${KEYS.join(", ")}`);
  const podJson = { ...scriptPod("test"), ...object(top.pod ?? {}, "scenario: pod") };
  const pod = message(() => fromJson(PodSandboxSchema, podJson as unknown as JsonValue), "scenario: pod");
  const ctrJson = { ...scriptContainer("test"), ...object(top.container ?? {}, "scenario: container"), podSandboxId: pod.id };
  const container = message(() => fromJson(ContainerSchema, ctrJson as unknown as JsonValue), "scenario: container");
  let existing: Scenario["existing"];
  if (top.existing === undefined) {
    existing = { pods: [fromJson(PodSandboxSchema, syncPod as unknown as JsonValue)], containers: [fromJson(ContainerSchema, syncContainer as unknown as JsonValue)] };
  } else {
    const e = object(top.existing, "scenario: existing");
    for (const k of Object.keys(e)) if (k !== "pods" && k !== "containers") throw new Error(`scenario: existing: unknown key "${k}": use pods, containers`);
    existing = {
      pods: list(e.pods, "scenario: existing: pods").map((p, i) => message(() => fromJson(PodSandboxSchema, p as JsonValue), `scenario: existing: pods[${i}]`)),
      containers: list(e.containers, "scenario: existing: containers").map((c, i) => message(() => fromJson(ContainerSchema, c as JsonValue), `scenario: existing: containers[${i}]`)),
    };
  }
  const ids = existing.containers.map((c) => c.id);
  if (ids.includes(container.id)) throw new Error(`scenario: container "${container.id}" exists already: give the script's container an id of its own`);
  const others = list(top.others, "scenario: others").map((o, i) => other(o, `scenario: others[${i}]`));
  return { pod, container, existing, others };
}

function other(json: unknown, where: string): OtherPlugin {
  const o = object(json, where);
  for (const k of Object.keys(o)) if (!OTHER_KEYS.includes(k)) throw new Error(`${where}: unknown key "${k}": use ${OTHER_KEYS.join(", ")}`);
  if (typeof o.name !== "string" || typeof o.idx !== "string") throw new Error(`${where}: give name and idx as strings`);
  const name = o.name;
  const idx = o.idx;
  message(() => checkPluginName(name), where);
  message(() => checkPluginIndex(idx), where);
  const adjust = o.adjust === undefined ? undefined : message(() => fromJson(ContainerAdjustmentSchema, o.adjust as JsonValue), `${where}: adjust`);
  const update = list(o.update, `${where}: update`).map((u, j) => message(() => fromJson(ContainerUpdateSchema, u as JsonValue), `${where}: update[${j}]`));
  return { name, idx, ...(adjust === undefined ? {} : { adjust }), update };
}
