/**
 * NRI protocol revision v1beta1 (package `nri.pkg.api.v1beta1`): dedicated calls for every
 * event, a response type per call and a Shutdown reason. Shared messages are byte-identical to
 * v1alpha1. Importing it registers the generated binary codecs (`encodeX`/`decodeX`), which the
 * typed clients and servers then use.
 */
import * as schemas from "../gen/v1beta1/api_pb.js";
import { provideSchemas } from "./wire/lazy.js";

export * from "../gen/v1beta1/api_pb.js";
export * from "../gen/v1beta1/api_codec.js";

// The lazy schemas of nri-wire/plugin answer from this module once it is loaded.
provideSchemas("v1beta1/api.proto", schemas);
