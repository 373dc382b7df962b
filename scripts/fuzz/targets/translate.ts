import type { DescMessage, DescService } from "@bufbuild/protobuf";
import * as alpha from "../../../gen/v1alpha1/api_pb.js";
import * as beta from "../../../gen/v1beta1/api_pb.js";
import { Code } from "../../../src/ttrpc/status.js";
import { TranslateError } from "../../../src/translate/errors.js";
import { type Call, type EventCalls, responseToV1alpha1, responseToV1beta1, toV1alpha1, toV1beta1 } from "../../../src/translate/index.js";
import type { Corpus } from "../corpus.js";
import { mutate } from "../mutate.js";
import { Finding, type FuzzTarget, concatAll, defineTarget, describe, expectError, same } from "../target.js";

/** One translation call: which function, the call it gets, and the event dialect of toV1alpha1. */
type TranslateInput = { readonly fn: string; readonly service: string; readonly method: string; readonly payload: Uint8Array; readonly dialect: string };

/*
 * The oracle is built from the descriptors and the protocol, not from src/translate's tables:
 * the nine events a v1alpha1 peer receives as StateChange, each event's method named after its
 * enum value (RUN_POD_SANDBOX -> RunPodSandbox), a pod event's request having no container.
 */
const STATE_CHANGE_EVENTS: readonly number[] = [1, 2, 3, 5, 6, 7, 9, 11, 13];
const pascal = (name: string): string => name.split("_").map((w) => w[0] + w.slice(1).toLowerCase()).join("");
const methodOf = new Map(STATE_CHANGE_EVENTS.map((e) => [e, pascal(alpha.EventSchema.values.find((v) => v.number === e)!.name)]));
const eventOf = new Map([...methodOf].map(([e, m]) => [m, e]));
const requestOf = (svc: DescService, method: string): DescMessage | undefined => svc.methods.find((m) => m.name === method)?.input;
const podEvent = (e: number): boolean => !requestOf(beta.Plugin, methodOf.get(e)!)!.fields.some((f) => f.name === "container");
const SERVICES = { v1alpha1: [alpha.Runtime, alpha.Plugin, alpha.HostFunctions], v1beta1: [beta.Runtime, beta.Plugin, beta.HostFunctions] } as const;
const serviceOf = (rev: keyof typeof SERVICES, name: string): DescService | undefined => SERVICES[rev].find((s) => s.typeName === name);

const PACKAGES = { v1alpha1: alpha.file_v1alpha1_api.proto.package, v1beta1: beta.file_v1beta1_api.proto.package };
const ALPHA_PLUGIN = alpha.Plugin.typeName;
const BETA_PLUGIN = beta.Plugin.typeName;
const SOME_METHODS = [...eventOf.keys(), "StateChange", "Shutdown", "Configure", "Synchronize", "RegisterPlugin", "UpdateContainers", "CreateContainer", "Nope", ""];
const SOME_SERVICES = [ALPHA_PLUGIN, BETA_PLUGIN, alpha.Runtime.typeName, beta.Runtime.typeName, beta.HostFunctions.typeName, alpha.HostFunctions.typeName, "nri.pkg.api.v1gamma.Plugin", "Plugin", ""];
const FNS = ["toV1beta1", "toV1alpha1", "responseToV1alpha1", "responseToV1beta1"];
const DIALECTS = ["statechange", "dedicated"];
/** Event-calls values toV1alpha1 refuses: the old spelling, others close to the real ones. */
const BAD_DIALECTS = ["state-change", "StateChange", "", "dedicated ", "v1alpha1"];

/** A top-level field: number, wire type, and its bytes after the tag (a length varint as sent, then the value). */
interface RawField {
  readonly no: number;
  readonly wire: number;
  readonly raw: Uint8Array;
  /** A varint field's value (0 for other wire types). */
  readonly value: bigint;
}

/** A varint as protobuf-go reads one: at most 10 bytes, the 10th at most 1 (64 bits). */
function varintAt(b: Uint8Array, pos: number): [bigint, number] | undefined {
  let v = 0n;
  for (let i = 0; i < 10 && pos < b.length; i++) {
    const x = b[pos++]!;
    if (i === 9 && x > 1) return undefined;
    v |= BigInt(x & 0x7f) << BigInt(7 * i);
    if (x < 0x80) return [v, pos];
  }
  return undefined;
}

/** Field numbers run from 1 to 2^29 - 1. */
const MAX_FIELD = 2 ** 29 - 1;

/** Skips one field's value from `pos` (a group to its end tag); the position after it, or undefined if malformed. */
function skipValue(b: Uint8Array, pos: number, no: number, wire: number, depth: number): number | undefined {
  switch (wire) {
    case 0:
      return varintAt(b, pos)?.[1];
    case 1:
      return pos + 8 <= b.length ? pos + 8 : undefined;
    case 5:
      return pos + 4 <= b.length ? pos + 4 : undefined;
    case 2: {
      const len = varintAt(b, pos);
      return len !== undefined && len[0] <= BigInt(b.length - len[1]) ? len[1] + Number(len[0]) : undefined;
    }
    case 3: {
      if (depth > 100) return undefined;
      for (let p = pos; p < b.length; ) {
        const tag = varintAt(b, p);
        if (tag === undefined) return undefined;
        const n = Number(tag[0] >> 3n);
        const w = Number(tag[0] & 7n);
        if (n === 0 || n > MAX_FIELD) return undefined;
        if (w === 4) return n === no ? tag[1] : undefined;
        const next = skipValue(b, tag[1], n, w, depth + 1);
        if (next === undefined) return undefined;
        p = next;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The top-level fields of `b`, read plainly, or undefined where a well-formed reading is impossible. */
function topFields(b: Uint8Array): RawField[] | undefined {
  const out: RawField[] = [];
  for (let pos = 0; pos < b.length; ) {
    const tag = varintAt(b, pos);
    if (tag === undefined) return undefined;
    const no = Number(tag[0] >> 3n);
    const wire = Number(tag[0] & 7n);
    if (no === 0 || no > MAX_FIELD) return undefined;
    const end = skipValue(b, tag[1], no, wire, 0);
    if (end === undefined) return undefined;
    out.push({ no, wire, raw: b.subarray(tag[1], end), value: wire === 0 ? varintAt(b, tag[1])![0] : 0n });
    pos = end;
  }
  return out;
}

/** A varint read as protobuf reads an int32 enum: its low 32 bits, signed. */
const int32 = (v: bigint): number => Number(BigInt.asIntN(32, v));

/**
 * What a translation between a StateChange and a dedicated request must produce from `input`,
 * byte for byte: the declared fields renumbered in order (`renumber` maps number to new tag),
 * each value with its length as sent. Undefined where the input cannot be translated.
 */
function rewrite(input: Uint8Array, renumber: ReadonlyMap<number, number>, head: readonly number[]): Uint8Array | undefined {
  const fields = topFields(input);
  if (fields === undefined) return undefined;
  const parts: Uint8Array[] = [Uint8Array.from(head)];
  for (const f of fields) {
    const tag = renumber.get(f.no);
    if (tag === undefined) continue;
    parts.push(Uint8Array.of(tag), f.raw);
  }
  return concatAll(parts);
}

/** The event of a StateChange's bytes: the last `event` (1) varint, 0 if none; undefined if any declared field is not of its wire type. */
function stateChangeEvent(fields: readonly RawField[]): number | undefined {
  let event = 0;
  for (const f of fields) {
    if (f.no === 1) {
      if (f.wire !== 0) return undefined;
      event = int32(f.value);
    } else if ((f.no === 2 || f.no === 3) && f.wire !== 2) return undefined;
  }
  return event;
}

/** Checks a successful StateChange -> dedicated translation against the plain reading of its input. */
function checkFromStateChange(payload: Uint8Array, method: string, out: Uint8Array): void {
  const fields = topFields(payload);
  if (fields === undefined) throw new Finding("StateChange -> dedicated: translated a StateChange that is not well-formed");
  const event = stateChangeEvent(fields);
  if (event === undefined) throw new Finding("StateChange -> dedicated: translated a StateChange with a declared field of the wrong wire type");
  if (methodOf.get(event) !== method) throw new Finding(`StateChange -> dedicated: event ${event} became ${method}`);
  // pod (2) becomes 1, container (3) becomes 2, and a pod event drops its container.
  const want = rewrite(payload, new Map(podEvent(event) ? [[2, 0x0a]] : [[2, 0x0a], [3, 0x12]]), [])!;
  if (!same(want, out)) throw new Finding(`StateChange -> dedicated: ${method}'s bytes differ from the input's pod and container renumbered`);
}

/** Checks a successful dedicated -> StateChange translation against the plain reading of its input. */
function checkToStateChange(payload: Uint8Array, method: string, out: Uint8Array): void {
  const fields = topFields(payload);
  if (fields === undefined) throw new Finding(`dedicated -> StateChange: translated a ${method} request that is not well-formed`);
  const event = eventOf.get(method)!;
  const pod = podEvent(event);
  if (fields.some((f) => (f.no === 1 || (f.no === 2 && !pod)) && f.wire !== 2)) throw new Finding(`dedicated -> StateChange: translated a ${method} request with a declared field of the wrong wire type`);
  // event first, then pod (1) as 2 and container (2) as 3; fields the request does not declare are dropped.
  const want = rewrite(payload, new Map(pod ? [[1, 0x12]] : [[1, 0x12], [2, 0x1a]]), [0x08, event])!;
  if (!same(want, out)) throw new Finding(`dedicated -> StateChange: ${method}'s StateChange differs from the input's event, pod and container renumbered`);
}

/** Whether a translation of `payload` that failed had to fail: the input is malformed or names no StateChange event. */
function mustFail(payload: Uint8Array, toStateChange: boolean, method: string): boolean {
  const fields = topFields(payload);
  if (fields === undefined) return true;
  if (toStateChange) {
    const pod = podEvent(eventOf.get(method)!);
    return fields.some((f) => (f.no === 1 || (f.no === 2 && !pod)) && f.wire !== 2);
  }
  const event = stateChangeEvent(fields);
  return event === undefined || !methodOf.has(event);
}

/** The translation functions on mutated requests and random method names, against the descriptors and protobuf-es. */
export function translateTarget(corpus: Corpus): FuzzTarget {
  const requestsOf = (method: string): readonly Uint8Array[] => corpus.messages.get(`${PACKAGES.v1beta1}.${method}Request`) ?? corpus.allMessages;
  const stateChanges = corpus.messages.get(alpha.StateChangeEventSchema.typeName) ?? corpus.allMessages;
  const isTranslateError = (e: unknown): boolean => e instanceof TranslateError && e.code === Code.INVALID_ARGUMENT && e.rawMessage.startsWith("translate: ");
  return defineTarget<TranslateInput>(
    {
      name: "translate",
      errorClass: 'TranslateError (an RpcError INVALID_ARGUMENT) `translate: ...`; toV1alpha1 with another event-calls value: RangeError `translate: event calls "x" is not "dedicated" or "statechange"`',
      afterError: "usable: pure functions, no state",
      draw(rng, kept) {
        const dialect = rng.chance(0.5) ? "statechange" : "dedicated";
        if (kept.length > 0 && rng.chance(0.1)) {
          const k = rng.pick(kept);
          return { ...k, payload: mutate(rng, k.payload, corpus.allMessages, true) };
        }
        switch (rng.int(5)) {
          case 0:
            return { fn: "toV1beta1", service: ALPHA_PLUGIN, method: "StateChange", payload: mutate(rng, rng.pick(stateChanges), corpus.allMessages, true), dialect };
          case 1: {
            const method = rng.pick([...eventOf.keys()]);
            return { fn: "toV1alpha1", service: BETA_PLUGIN, method, payload: mutate(rng, rng.pick(requestsOf(method)), corpus.allMessages, true), dialect: "statechange" };
          }
          case 2:
            return {
              fn: "toV1alpha1",
              service: rng.pick(SOME_SERVICES),
              method: rng.pick(SOME_METHODS),
              payload: mutate(rng, rng.pick(corpus.allMessages), corpus.allMessages, true),
              dialect: rng.chance(0.05) ? rng.pick(BAD_DIALECTS) : dialect,
            };
          case 3:
            return { fn: "toV1beta1", service: rng.pick(SOME_SERVICES), method: rng.pick(SOME_METHODS), payload: mutate(rng, rng.pick(stateChanges), corpus.allMessages, true), dialect };
          default:
            return { fn: rng.pick(FNS.slice(2)), service: rng.pick(SOME_SERVICES), method: rng.pick(SOME_METHODS), payload: rng.pick(corpus.allMessages), dialect };
        }
      },
      check({ fn, service, method, payload, dialect }, probe) {
        if (!FNS.includes(fn)) throw new Error(`fuzz: translate input with fn ${fn}`);
        const call: Call = { service, method, payload };
        if (fn === "toV1alpha1" && !DIALECTS.includes(dialect)) {
          // Refused where it enters, whatever the call: a misspelt value never takes another path.
          const want = `translate: event calls ${JSON.stringify(dialect)} is not "dedicated" or "statechange"`;
          try {
            probe.time(() => toV1alpha1(call, dialect as EventCalls));
          } catch (e) {
            if (e instanceof RangeError && e.message === want) return { error: e.message };
            throw new Finding(`toV1alpha1 with event calls ${JSON.stringify(dialect)} threw ${describe(e)}, want RangeError ${want}`);
          }
          throw new Finding(`toV1alpha1 took event calls ${JSON.stringify(dialect)}`);
        }
        // The revision the call comes from must own the service; nothing else is refused but a bad StateChange.
        const from = fn === "toV1beta1" || fn === "responseToV1alpha1" ? "v1alpha1" : "v1beta1";
        const toAlpha = from === "v1beta1";
        const known = serviceOf(from, service) !== undefined;
        let out;
        try {
          out = probe.time(() => {
            if (fn === "toV1beta1") return toV1beta1(call);
            if (fn === "toV1alpha1") return toV1alpha1(call, dialect as EventCalls);
            return fn === "responseToV1alpha1" ? responseToV1alpha1(call, payload) : responseToV1beta1(call, payload);
          });
        } catch (e) {
          expectError(e, isTranslateError, fn);
          // Only a StateChange, or an event call for a statechange peer, has bytes that can be refused.
          const stateChange = fn === "toV1beta1" && service === ALPHA_PLUGIN && method === "StateChange";
          const toStateChange = fn === "toV1alpha1" && service === BETA_PLUGIN && dialect === "statechange" && eventOf.has(method);
          if (known && !stateChange && !toStateChange) throw new Finding(`${fn} refused a call of ${service}: ${(e as Error).message}`);
          if ((stateChange || toStateChange) && !mustFail(payload, toStateChange, method)) {
            throw new Finding(`${fn} refused a well-formed ${method} call: ${(e as TranslateError).rawMessage}`);
          }
          return { error: (e as TranslateError).rawMessage };
        }
        if (!known) throw new Finding(`${fn} translated a call of ${JSON.stringify(service)}, not a ${from} service`);
        if ("typeName" in out) {
          // A response keeps its bytes; its type is the method's output in the answered call's revision.
          if (out.payload !== payload) throw new Finding("a response's bytes changed");
          const want = serviceOf(from, service)!.methods.find((m) => m.name === method)?.output.typeName;
          if (out.typeName !== want) throw new Finding(`${fn} typed ${service}/${method}'s answer ${out.typeName}, its descriptor says ${want}`);
          return "ok";
        }
        const short = service.slice(service.lastIndexOf(".") + 1);
        if (out.service !== `${PACKAGES[toAlpha ? "v1alpha1" : "v1beta1"]}.${short}`) throw new Finding(`${fn} sent ${service} to ${out.service}`);
        const plugin = short === "Plugin";
        if (plugin && method === "StateChange" && !toAlpha) {
          checkFromStateChange(payload, out.method, out.payload);
          probe.tally("StateChange -> dedicated");
        } else if (plugin && toAlpha && dialect === "statechange" && eventOf.has(method)) {
          if (out.method !== "StateChange") throw new Finding(`${method} went to a statechange peer as ${out.method}`);
          checkToStateChange(payload, method, out.payload);
          probe.tally("dedicated -> StateChange");
        } else if (plugin && method === "Shutdown") {
          if (out.method !== "Shutdown" || out.payload.length !== 0) throw new Finding(`Shutdown became ${out.method} of ${out.payload.length} bytes`);
        } else if (out.method !== method || out.payload !== payload) {
          throw new Finding(`${fn} changed ${service}/${method} to ${out.method}${out.payload === payload ? "" : " and its bytes"}`);
        }
        return "ok";
      },
    },
    { fn: "string", service: "string", method: "string", payload: "bytes", dialect: "string" },
  );
}
