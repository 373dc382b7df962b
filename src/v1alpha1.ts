/**
 * NRI protocol revision v1alpha1 (package `nri.pkg.api.v1alpha1`): the generated message
 * schemas, enums and service descriptors, wire-identical to containerd/nri v0.12.5, and the
 * generated binary codecs (`encodeX`/`decodeX`), registered for the typed clients and servers.
 */
import * as schemas from "../gen/v1alpha1/api_pb.js";
import { provideSchemas } from "./wire/lazy.js";

export * from "../gen/v1alpha1/api_pb.js";
export * from "../gen/v1alpha1/api_codec.js";

// The lazy schemas of nri-wire/plugin answer from this module once it is loaded.
provideSchemas("v1alpha1/api.proto", schemas);
