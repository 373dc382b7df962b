/**
 * NRI protocol revision v1beta1 (package `nri.pkg.api.v1beta1`): dedicated calls for every
 * event, a response type per call and a Shutdown reason. Shared messages are byte-identical to
 * v1alpha1. With them, the generated binary codecs (`encodeX`/`decodeX`) and the table of the
 * generated code (`messages_v1beta1_api`) a MessageRegistry is built from.
 */
export * from "../gen/v1beta1/api_pb.js";
export * from "../gen/v1beta1/api_codec.js";
// The enums are the objects of api_lite.ts, which modules that decode no descriptor use: one object
// per enum, with the contents of protoc-gen-es's.
export { LogRequest_Level, SecurityProfile_ProfileType, Event, ContainerState, IOPrioClass, LinuxSchedulerPolicy, LinuxSchedulerFlag, MpolMode, MpolFlag, Field } from "../gen/v1beta1/api_lite.js";
