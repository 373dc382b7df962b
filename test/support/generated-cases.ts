import type { DescFile, DescMessage } from "@bufbuild/protobuf";
import { messages_v1alpha1_api } from "../../gen/v1alpha1/api_codec.js";
import { messages_v1beta1_api } from "../../gen/v1beta1/api_codec.js";
import { messages_ttrpc_request } from "../../gen/ttrpc/request_codec.js";
import { messages_google_rpc_status } from "../../gen/google/rpc/status_codec.js";
import { messages_kitchen_v1_kitchen } from "../codegen/gen/kitchen/v1/kitchen_codec.js";
import { file_v1alpha1_api } from "../../gen/v1alpha1/api_pb.js";
import { file_v1beta1_api } from "../../gen/v1beta1/api_pb.js";
import { file_ttrpc_request } from "../../gen/ttrpc/request_pb.js";
import { file_google_rpc_status } from "../../gen/google/rpc/status_pb.js";
import { WithStructSchema, file_kitchen_v1_kitchen } from "../codegen/gen/kitchen/v1/kitchen_pb.js";
import type { GeneratedMessage } from "../../src/wire/codegen.js";
import { reflection } from "../../src/wire/reflection.js";
import { messageRegistry } from "../../src/wire/registry.js";
import { allMessages } from "../arbitraries/message.js";

/**
 * The generated code of every proto file our generator runs on, reflective for the rest: both NRI
 * revisions, the ttrpc envelope, google.rpc.Status and the kitchen-sink proto.
 */
export const MESSAGES = messageRegistry(
  [messages_v1alpha1_api, messages_v1beta1_api, messages_ttrpc_request, messages_google_rpc_status, messages_kitchen_v1_kitchen],
  reflection,
);

/**
 * Every proto file our generator runs on (the kitchen-sink proto uses every construct the
 * generator handles), by a short name for test titles.
 */
export const GENERATED_FILES: readonly (readonly [string, DescFile])[] = [
  ["v1alpha1", file_v1alpha1_api],
  ["v1beta1", file_v1beta1_api],
  ["ttrpc", file_ttrpc_request],
  ["google.rpc", file_google_rpc_status],
  ["kitchen", file_kitchen_v1_kitchen],
];

/** Messages left to the reflective fallback by design: no generated code. */
export const REFLECTIVE: ReadonlySet<string> = new Set([WithStructSchema.typeName]);

/** `[title, schema]` of every message with generated code, for `it.each`. */
export const GENERATED_CASES: readonly (readonly [string, DescMessage])[] = GENERATED_FILES.flatMap(([name, file]) =>
  allMessages(file)
    .filter((m) => !REFLECTIVE.has(m.typeName))
    .map((m) => [`${name} ${m.name}`, m] as const),
);

/** The generated code of `schema` in MESSAGES; throws when there is none. */
export function generated(schema: DescMessage): GeneratedMessage {
  const g = MESSAGES.generated(schema.typeName);
  if (g === undefined) throw new Error(`test: no generated message for ${schema.typeName}`);
  return g;
}
