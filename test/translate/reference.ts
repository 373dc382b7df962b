import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescMessage } from "@bufbuild/protobuf";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import * as beta from "../../gen/v1beta1/api_pb.js";

/**
 * The reference translation, through the generated types: decode, build the other message with
 * create(), encode. It imports nothing from src (its tables come from PROTOCOL.md §2 and the
 * descriptors), so the property tests compare two independent implementations.
 */

/** The nine StateChange events of PROTOCOL.md §2, and which of them carry a container. */
export const NINE: readonly number[] = [1, 2, 3, 5, 6, 7, 9, 11, 13];
export const POD_ONLY: readonly number[] = [1, 2, 3, 13];

/** The v1beta1 Plugin method of an event, by the enum's name in the descriptor (`POST_UPDATE_POD_SANDBOX` -> `PostUpdatePodSandbox`). */
export function refMethod(event: number): string {
  const value = beta.EventSchema.values.find((v) => v.number === event);
  if (value === undefined) throw new Error(`test: no event ${event}`);
  return value.name
    .split("_")
    .map((w) => w.charAt(0) + w.slice(1).toLowerCase())
    .join("");
}

function methodDesc(service: typeof beta.Plugin | typeof alpha.Plugin, name: string) {
  const m = service.methods.find((x) => x.name === name);
  if (m === undefined) throw new Error(`test: no method ${name}`);
  return m;
}

/** The v1beta1 request schema of an event's dedicated call. */
export function betaRequestSchema(event: number): DescMessage {
  return methodDesc(beta.Plugin, refMethod(event)).input;
}

/** The v1alpha1 request schema of an event's dedicated call (dedicated-era v1alpha1). */
export function alphaRequestSchema(event: number): DescMessage {
  return methodDesc(alpha.Plugin, refMethod(event)).input;
}

function hasContainer(schema: DescMessage): boolean {
  return schema.fields.some((f) => f.localName === "container");
}

/** StateChangeEvent bytes -> {method, v1beta1 request bytes}; throws for events outside the nine. */
export function refFromStateChange(bytes: Uint8Array): { event: number; method: string; payload: Uint8Array } {
  const sc = fromBinary(alpha.StateChangeEventSchema, bytes);
  if (!NINE.includes(sc.event)) throw new Error(`reference: event ${sc.event} has no dedicated call`);
  const schema = betaRequestSchema(sc.event);
  const init: Record<string, unknown> = { pod: sc.pod };
  if (hasContainer(schema)) init["container"] = sc.container;
  return { event: sc.event, method: refMethod(sc.event), payload: toBinary(schema, create(schema, init)) };
}

/** v1beta1 dedicated request bytes of `event` -> StateChangeEvent bytes. */
export function refToStateChange(event: number, bytes: Uint8Array): Uint8Array {
  const schema = betaRequestSchema(event);
  const req = fromBinary(schema, bytes) as unknown as { pod?: alpha.PodSandbox; container?: alpha.Container };
  const sc = create(alpha.StateChangeEventSchema, { event, pod: req.pod, container: req.container });
  return toBinary(alpha.StateChangeEventSchema, sc);
}
