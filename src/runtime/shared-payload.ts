import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { GeneratedMessage } from "../wire/generated.js";
import { allocate } from "../wire/writer.js";

/**
 * Requests encoded once for every plugin of an event. An event whose request no plugin's answer
 * changes (the relayed events) shares all its bytes. CreateContainer's request changes as each
 * plugin's adjustment is merged into its container, so it is encoded per plugin, as the
 * reference does; only its pod, which no answer changes, is encoded once.
 *
 * The event holds what it encoded and hands it to each plugin's call beside the request, so it
 * is garbage with the event. A table keyed by request, even a WeakMap, would outlive it: V8's
 * young-generation collection copies a weak table's values even when their keys have died, so
 * each collection would copy the bytes of every event since the one before, and the young
 * generation would grow to hold them (and with it the process, and how often the old generation
 * is marked: docs/performance.md, Memory).
 */
export interface SharedRequest {
  /** The bytes of the request the event shares, as they are to be sent now. */
  bytes(): Uint8Array;
}

/** A request encoded whole: later changes to it are not sent. */
class Whole implements SharedRequest {
  constructor(private readonly encoded: Uint8Array) {}

  bytes(): Uint8Array {
    return this.encoded;
  }
}

/** A request whose leading message field was encoded once, the rest at each call. */
class LeadingField<Desc extends DescMessage> implements SharedRequest {
  constructor(
    private readonly type: GeneratedMessage<Desc>,
    private readonly request: MessageShape<Desc>,
    private readonly field: string,
    /** The field's value when it was encoded. */
    private readonly value: unknown,
    /** Its bytes, tag included. */
    private readonly head: Uint8Array,
  ) {}

  bytes(): Uint8Array {
    const request = this.request as Record<string, unknown>;
    // The field still holding the value it was encoded from (the same object) is what is sent.
    if (request[this.field] !== this.value) return this.type.encode(this.request);
    const rest = this.type.encode({ ...request, [this.field]: undefined } as never);
    const out = allocate(this.head.length + rest.length);
    out.set(this.head, 0);
    out.set(rest, this.head.length);
    return out;
  }
}

/** Encodes `request` now; every plugin of the event is sent these bytes. */
export function encodedOnce<Desc extends DescMessage>(type: GeneratedMessage<Desc>, request: MessageShape<Desc>): SharedRequest {
  return new Whole(type.encode(request));
}

/**
 * Encodes the field `field` of `request` now, for an event that encodes the rest per plugin. Only
 * a message field declared first qualifies: the encoding writes fields in declaration order and
 * unknown fields last, so the field's bytes lead the whole encoding. Otherwise (or when the field
 * is not set) nothing is shared: undefined.
 */
export function leadingFieldOnce<Desc extends DescMessage>(type: GeneratedMessage<Desc>, request: MessageShape<Desc>, field: string): SharedRequest | undefined {
  const first = type.fields()[0];
  if (first === undefined || first.localName !== field || first.fieldKind !== "message") return undefined;
  const value = (request as Record<string, unknown>)[field];
  if (value === undefined) return undefined;
  return new LeadingField(type, request, field, value, type.encode({ [field]: value } as never));
}
