import type { Event } from "../../gen/v1beta1/api_pb.js";
import { allocate } from "../wire/writer.js";
import { TranslateError } from "./errors.js";
import { FieldCursor } from "./fields.js";
import { WireType } from "../wire/wire-type.js";
import { describeEvent, eventMethods, podEvents } from "./state-change-events.js";

/*
 * StateChangeEvent{event = 1, pod = 2, container = 3} and the dedicated requests
 * {pod = 1, container = 2} share the PodSandbox and Container bytes, so translating between them
 * only rewrites top-level tags. Field tags of wire type 2 below 16 fit one byte.
 */
const TAG_EVENT = 0x08; // field 1, varint
const TAG_1 = 0x0a; // field 1, length-delimited
const TAG_2 = 0x12; // field 2, length-delimited
const TAG_3 = 0x1a; // field 3, length-delimited

/** The dedicated request type of each event, for errors (`RunPodSandboxRequest`). */
const requestNames: ReadonlyMap<number, string> = new Map([...eventMethods].map(([e, m]) => [e, `${m}Request`]));

/** A StateChange as the dedicated request for its event. */
export interface DedicatedRequest {
  /** One of the nine StateChange events. */
  readonly event: Event;
  /** The dedicated Plugin method (`RunPodSandbox`), the same in both packages. */
  readonly method: string;
  /** The request bytes (`RunPodSandboxRequest` etc.). */
  readonly payload: Uint8Array;
}

/**
 * The dedicated request for a StateChangeEvent's bytes: `pod` (2) becomes field 1 and
 * `container` (3) field 2, each occurrence in its original order with its value bytes untouched.
 *
 * Rules for non-canonical input, chosen to agree with decoding through the generated types:
 * - `event` given more than once: the last one counts; absent, it is 0 (UNKNOWN).
 * - an event outside the nine (0, 4, 8, 10, 12, 14, 15, undeclared or negative numbers) is a
 *   TranslateError: `translate: StateChange event 4 (CREATE_CONTAINER) has no dedicated call`.
 * - a pod event (1, 2, 3, 13) that carries a container: the container is dropped, as the Go
 *   plugin stub ignores it for pod events.
 * - fields StateChangeEvent does not declare (4 and up) are dropped.
 * - a declared field with the wrong wire type, or malformed or truncated bytes anywhere at the
 *   top level, is a TranslateError naming the byte offset.
 */
export function fromStateChange(payload: Uint8Array): DedicatedRequest {
  const c = new FieldCursor(payload, "StateChangeEvent");
  let event = 0;
  let podSize = 0;
  let containerSize = 0;
  // Triples of (new tag, value start, end) for every pod and container occurrence, in order.
  const spans: number[] = [];
  while (c.next()) {
    switch (c.no) {
      case 1:
        c.expect(WireType.Varint);
        event = c.int32();
        break;
      case 2:
        c.expect(WireType.Bytes);
        spans.push(TAG_1, c.valueStart, c.end);
        podSize += 1 + c.end - c.valueStart;
        break;
      case 3:
        c.expect(WireType.Bytes);
        spans.push(TAG_2, c.valueStart, c.end);
        containerSize += 1 + c.end - c.valueStart;
        break;
    }
  }
  const method = eventMethods.get(event);
  if (method === undefined) {
    throw new TranslateError(`translate: StateChange event ${describeEvent(event)} has no dedicated call`);
  }
  const withContainer = !podEvents.has(event);
  const out = allocate(withContainer ? podSize + containerSize : podSize);
  copySpans(payload, spans, out, 0, withContainer ? -1 : TAG_2);
  return { event: event as Event, method, payload: out };
}

/**
 * The StateChangeEvent bytes for the dedicated request of `event` (one of the nine):
 * `event` first, then `pod` (1) as field 2 and, for container events, `container` (2) as
 * field 3, each occurrence in its original order with its value bytes untouched.
 *
 * Rules for non-canonical input: fields the dedicated request does not declare are dropped
 * (their numbers would collide with StateChangeEvent's: a pod request's field 2 would become the
 * container); a declared field with the wrong wire type, or malformed or truncated bytes anywhere
 * at the top level, is a TranslateError naming the byte offset.
 */
export function toStateChange(event: Event, payload: Uint8Array): Uint8Array {
  const typeName = requestNames.get(event);
  if (typeName === undefined) {
    throw new TranslateError(`translate: event ${describeEvent(event)} is not a StateChange event`);
  }
  const withContainer = !podEvents.has(event);
  const c = new FieldCursor(payload, typeName);
  let size = 2;
  const spans: number[] = [];
  while (c.next()) {
    if (c.no === 1) {
      c.expect(WireType.Bytes);
      spans.push(TAG_2, c.valueStart, c.end);
      size += 1 + c.end - c.valueStart;
    } else if (c.no === 2 && withContainer) {
      c.expect(WireType.Bytes);
      spans.push(TAG_3, c.valueStart, c.end);
      size += 1 + c.end - c.valueStart;
    }
  }
  const out = allocate(size);
  out[0] = TAG_EVENT;
  out[1] = event; // 1..13: a one-byte varint
  copySpans(payload, spans, out, 2, -1);
  return out;
}

/** Writes each (tag, start, end) span of `src` to `out` from `pos`, leaving out those tagged `skip`. */
function copySpans(src: Uint8Array, spans: readonly number[], out: Uint8Array, pos: number, skip: number): void {
  for (let i = 0; i < spans.length; i += 3) {
    const tag = spans[i]!;
    if (tag === skip) continue;
    const start = spans[i + 1]!;
    const end = spans[i + 2]!;
    out[pos++] = tag;
    out.set(src.subarray(start, end), pos);
    pos += end - start;
  }
}
