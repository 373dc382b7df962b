/** Protocol packages on the wire. */
export const V1ALPHA1 = "nri.pkg.api.v1alpha1";
export const V1BETA1 = "nri.pkg.api.v1beta1";

/** Which revision a peer speaks, as told by the package of its calls. */
export type ApiVersion = "v1alpha1" | "v1beta1";

/** The NRI release whose v1alpha1 API nri-wire matches, sent as NRI_version. */
export const NRI_VERSION = "v0.12.5";

export function serviceName(version: ApiVersion, service: "Plugin" | "Runtime" | "HostFunctions"): string {
  return `${version === "v1beta1" ? V1BETA1 : V1ALPHA1}.${service}`;
}
