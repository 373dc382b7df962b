/**
 * NRI protocol revision v1beta1 (package `nri.pkg.api.v1beta1`): dedicated calls for every
 * event, a response type per call and a Shutdown reason. Shared messages are byte-identical to
 * v1alpha1.
 */
export * from "../gen/v1beta1/api_pb.js";
