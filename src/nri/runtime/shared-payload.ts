import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { toBinary } from "../../wire/codec.js";

/**
 * Requests encoded once for every plugin of an event. Only an event whose request no plugin's
 * answer changes shares its bytes (the relayed events); CreateContainer's request changes as
 * each plugin's adjustment is merged, so it is encoded per plugin, as the reference does.
 */
const shared = new WeakMap<object, Uint8Array>();

/** Encodes `request` now; later plugins of the event send these bytes. */
export function shareEncoded<Desc extends DescMessage>(schema: Desc, request: MessageShape<Desc>): void {
  shared.set(request, toBinary(schema, request));
}

/** The bytes of `request`: shared ones when the event encoded it once, else freshly encoded. */
export function encodedRequest<Desc extends DescMessage>(schema: Desc, request: MessageShape<Desc>): Uint8Array {
  return shared.get(request) ?? toBinary(schema, request);
}
