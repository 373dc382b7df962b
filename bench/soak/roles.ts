/**
 * What each plugin role of the soak does to a container, in one place: the plugin processes
 * apply it and the final check of the soak expects it in the runtime's merged answers.
 */

/** The roles of the TypeScript plugin process. */
export type Role = "annotator" | "updater" | "validator";

/** The container name the validator role rejects. */
export const REJECTED_NAME = "reject-me";

/** The validator's rejection reason. */
export const REJECTION_REASON = `container ${REJECTED_NAME} is not allowed`;

/** The annotation an annotator named `name` adds on CreateContainer. */
export function annotationOf(name: string): string {
  return `soak.nri-wire.io/${name}`;
}

/** The environment variable an annotator named `name` adds on CreateContainer. */
export function envOf(name: string): string {
  return `SOAK_${name.toUpperCase().replaceAll("-", "_")}`;
}

/** The memory limit the updater sets on UpdateContainer. */
export const UPDATER_MEMORY_LIMIT = 256 * 2 ** 20;

/** The CPU quota the updater asks for, unsolicited, after each PostStartContainer. */
export const UPDATER_CPU_QUOTA = 50_000;

/** What the Go stub plugin (test/interop/nri-peer) adds on CreateContainer and UpdateContainer. */
export const GO_PLUGIN = { annotation: "nri-wire/seen", env: "NRI_WIRE_SEEN", cpuShares: 512n } as const;
