/**
 * NRI protocol revision v1alpha1 (package `nri.pkg.api.v1alpha1`): the generated message
 * schemas, enums and service descriptors, wire-identical to containerd/nri v0.12.5, and the
 * generated binary codecs (`encodeX`/`decodeX`) and the table of the generated code
 * (`messages_v1alpha1_api`) a MessageRegistry is built from.
 */
export * from "../gen/v1alpha1/api_pb.js";
export * from "../gen/v1alpha1/api_codec.js";
// The enums are the objects of api_lite.ts, which modules that decode no descriptor use: one object
// per enum, with the contents of protoc-gen-es's.
export { LogRequest_Level, SecurityProfile_ProfileType, Event, ContainerState, IOPrioClass, LinuxSchedulerPolicy, LinuxSchedulerFlag, MpolMode, MpolFlag, Field } from "../gen/v1alpha1/api_lite.js";
