/**
 * @internal Names the runtime endpoint still imports; they are derived from src/translate and
 * src/nri/nri-releases.
 */
import { type Version, packages } from "../translate/index.js";

export { NRI_VERSION } from "./nri-releases.js";

/** @internal */
export const V1ALPHA1 = packages.v1alpha1;
/** @internal */
export const V1BETA1 = packages.v1beta1;

/** Which revision a peer speaks, as told by the package of its calls. */
export type ApiVersion = Version;

/** @internal The full name of an NRI service of a revision. */
export function serviceName(version: Version, service: "Plugin" | "Runtime" | "HostFunctions"): string {
  return `${packages[version]}.${service}`;
}
