import { Event } from "../../gen/v1beta1/api_lite.js";
import { VALID_EVENTS_MASK, eventsToMask } from "./events.js";
import { closestAtOrBelow, compareSemver, parseSemver } from "./semver.js";

/** The NRI release whose v1alpha1 API nri-wire matches, sent as NRI_version when registering. */
export const NRI_VERSION = "v0.12.5";

/** The pre-release of NRI that CRI-O v1.33 and v1.34 ship: it knows events up to PostUpdatePodSandbox. */
const CRIO_PRE_V0_10 = "v0.9.1-0.20250219030224-e597e7849f24";

/**
 * The NRI release each runtime release ships, for runtimes that do not send their NRI version in
 * Configure (those before NRI v0.12). Each row holds from its runtime version up to the next
 * row's; a version below the first row is unknown. From the release notes and module files of
 * containerd and CRI-O; CRI-O v1.34 differs from the Go stub's table (which says v0.10.0)
 * because a real CRI-O v1.34.0 refuses ValidateContainerAdjustment as an unknown event.
 */
const RUNTIME_RELEASES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  containerd: [
    ["v1.7.0", "v0.3.0"],
    ["v1.7.7", "v0.4.0"],
    ["v1.7.14", "v0.6.0"],
    ["v1.7.16", "v0.6.1"],
    ["v1.7.26", "v0.8.0"],
    ["v2.0.0", "v0.8.0"],
    ["v2.2.0", "v0.10.0"],
    ["v2.2.1", "v0.11.0"],
  ],
  "cri-o": [
    ["v1.26.0", "v0.2.0"],
    ["v1.26.2", "v0.3.0"],
    ["v1.26.4", "v0.3.1-0.20230504231226-94185418e253"],
    ["v1.27.0", "v0.3.0"],
    ["v1.27.1", "v0.3.1-0.20230504231226-94185418e253"],
    ["v1.29.0", "v0.5.0"],
    ["v1.29.2", "v0.6.0"],
    ["v1.31.0", "v0.6.1"],
    ["v1.32.0", "v0.9.0"],
    ["v1.33.0", CRIO_PRE_V0_10],
    ["v1.35.0", "v0.11.0"],
  ],
};

/**
 * The NRI version a runtime ships, told by its name (`containerd`, `cri-o`) and version.
 * Throws, saying why, when the runtime or its version is not in the table.
 */
export function inferNriVersion(runtimeName: string, runtimeVersion: string): string {
  const rows = RUNTIME_RELEASES[runtimeName];
  if (rows === undefined) throw new RangeError(`nri: cannot infer the NRI version of unknown runtime "${runtimeName}"`);
  const version = runtimeVersion.startsWith("v") ? runtimeVersion : `v${runtimeVersion}`;
  const row = closestAtOrBelow(version, rows.map(([r]) => r));
  if (row === undefined) throw new RangeError(`nri: cannot infer the NRI version of ${runtimeName} ${runtimeVersion}: no known release at or below it`);
  return rows.find(([r]) => r === row)![1];
}

/** The last event each NRI release knows; releases in between know what the one below knows. */
const LAST_EVENT_BY_RELEASE: readonly (readonly [string, Event])[] = [
  ["v0.1.0", Event.REMOVE_CONTAINER],
  [CRIO_PRE_V0_10, Event.POST_UPDATE_POD_SANDBOX],
  ["v0.10.0", Event.VALIDATE_CONTAINER_ADJUSTMENT],
];

/**
 * The mask of the events a runtime of NRI version `nriVersion` accepts in a subscription, or
 * undefined when the version does not parse (then nothing is known). Versions newer than this
 * table know every event nri-wire knows.
 */
export function eventsKnownBy(nriVersion: string): number | undefined {
  const v = parseSemver(nriVersion);
  if (v === undefined) return undefined;
  let last: Event | undefined;
  for (const [release, event] of LAST_EVENT_BY_RELEASE) if (compareSemver(parseSemver(release)!, v) <= 0) last = event;
  if (last === undefined) return undefined;
  return last === Event.VALIDATE_CONTAINER_ADJUSTMENT ? VALID_EVENTS_MASK : eventsToMask(Array.from({ length: last }, (_, i) => i + 1));
}

/** Versions a runtime sends when it does not know its own NRI version. */
export function isUnknownNriVersion(v: string): boolean {
  return v === "" || v === "(devel)" || v === "0.0.0-unknown" || v === "unknown";
}
