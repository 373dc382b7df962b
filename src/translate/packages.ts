/** The two protocol revisions. */
export type Version = "v1alpha1" | "v1beta1";

/** The protobuf package of each revision. */
export const packages: Readonly<Record<Version, string>> = {
  v1alpha1: "nri.pkg.api.v1alpha1",
  v1beta1: "nri.pkg.api.v1beta1",
};
