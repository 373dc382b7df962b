import type { DescMessage } from "@bufbuild/protobuf";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import { RequestSchema } from "../../gen/ttrpc/request_pb.js";

/**
 * Encodings cut short, one kind of cut each: where the cut falls, the message, the bytes in hex,
 * and the exact error of our generated decoder. protobuf-es raises RangeError `premature EOF`
 * for every one (test/proto/bad-input.test.ts); test/codegen/strict.test.ts checks the texts.
 */
export const TRUNCATED: readonly (readonly [what: string, schema: DescMessage, hex: string, generated: string])[] = [
  ["inside a tag", alpha.ConfigureResponseSchema, "80", "decode nri.pkg.api.v1alpha1.ConfigureResponse: truncated varint"],
  ["inside a varint value", alpha.ConfigureResponseSchema, "10 80", "decode nri.pkg.api.v1alpha1.ConfigureResponse: field events (2): truncated varint"],
  ["right after a tag", alpha.ConfigureResponseSchema, "10", "decode nri.pkg.api.v1alpha1.ConfigureResponse: field events (2): truncated varint"],
  ["inside a string", alpha.RegisterPluginRequestSchema, "0a 05 61 62", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): length 5 exceeds remaining 2"],
  ["inside a length prefix", alpha.RegisterPluginRequestSchema, "0a 80", "decode nri.pkg.api.v1alpha1.RegisterPluginRequest: field plugin_name (1): truncated varint"],
  ["inside a nested message", alpha.RunPodSandboxRequestSchema, "0a 05 0a 03 61", "decode nri.pkg.api.v1alpha1.RunPodSandboxRequest: field pod (1): length 5 exceeds remaining 3"],
  ["inside a packed repeated field", alpha.UserSchema, "1a 03 05 06", "decode nri.pkg.api.v1alpha1.User: field additional_gids (3): length 3 exceeds remaining 2"],
  ["inside an unknown fixed64", alpha.UserSchema, "21 01 02 03", "decode nri.pkg.api.v1alpha1.User: field 4: fixed64 exceeds remaining 3"],
  ["inside an unknown fixed32", alpha.UserSchema, "25 01 02", "decode nri.pkg.api.v1alpha1.User: field 4: fixed32 exceeds remaining 2"],
  ["inside a ttrpc Request payload", RequestSchema, "1a 04 00 00", "decode ttrpc.Request: field payload (3): length 4 exceeds remaining 2"],
];
