import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { GeneratedMessage } from "../wire/generated.js";

/**
 * Requests encoded once for every plugin of an event. An event whose request no plugin's answer
 * changes (the relayed events) shares all its bytes. CreateContainer's request changes as each
 * plugin's adjustment is merged into its container, so it is encoded per plugin, as the
 * reference does; only its pod, which no answer changes, is encoded once.
 */
const shared = new WeakMap<object, Uint8Array>();

/** A leading message field encoded once: its value when encoded, and its bytes (tag included). */
interface Head {
  readonly field: string;
  readonly value: unknown;
  readonly bytes: Uint8Array;
}
const heads = new WeakMap<object, Head>();

/** Encodes `request` now; later plugins of the event send these bytes. */
export function shareEncoded<Desc extends DescMessage>(type: GeneratedMessage<Desc>, request: MessageShape<Desc>): void {
  shared.set(request, type.encode(request));
}

/**
 * Encodes the field `field` of `request` now, for an event that encodes the rest per plugin. Only
 * a message field declared first qualifies: the encoding writes fields in declaration order and
 * unknown fields last, so the field's bytes lead the whole encoding. Otherwise nothing is kept.
 */
export function shareLeadingField<Desc extends DescMessage>(type: GeneratedMessage<Desc>, request: MessageShape<Desc>, field: string): void {
  const first = type.fields()[0];
  if (first === undefined || first.localName !== field || first.fieldKind !== "message") return;
  const value = (request as Record<string, unknown>)[field];
  if (value === undefined) return;
  heads.set(request, { field, value, bytes: type.encode({ [field]: value } as never) });
}

/** The bytes of `request`: shared ones when the event encoded it (or its leading field) once. */
export function encodedRequest<Desc extends DescMessage>(type: GeneratedMessage<Desc>, request: MessageShape<Desc>): Uint8Array {
  const whole = shared.get(request);
  if (whole !== undefined) return whole;
  const head = heads.get(request);
  // The field still holding the value it was encoded from (the same object) is what is sent.
  if (head === undefined || (request as Record<string, unknown>)[head.field] !== head.value) return type.encode(request);
  const rest = type.encode({ ...request, [head.field]: undefined });
  const out = new Uint8Array(head.bytes.length + rest.length);
  out.set(head.bytes, 0);
  out.set(rest, head.bytes.length);
  return out;
}
