import { fromBinary } from "@bufbuild/protobuf";
import { RequestSchema, ResponseSchema } from "../../../gen/ttrpc/request_pb.js";
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from "../../../src/ttrpc/envelope.js";
import { ProtocolError } from "../../../src/ttrpc/errors.js";
import type { Corpus } from "../corpus.js";
import { mutate } from "../mutate.js";
import type { Rng } from "../rng.js";
import { Finding, type FuzzTarget, concatAll, copyOf, defineTarget, describe, expectError } from "../target.js";

/**
 * An envelope's bytes inside padding (a range of a larger buffer, the way frames hand it on), and
 * whether they are a seed left unmutated, which protobuf-es must read exactly alike.
 */
type EnvelopeInput = { readonly pre: Uint8Array; readonly bytes: Uint8Array; readonly post: Uint8Array; readonly valid: boolean };

const shape = { pre: "bytes", bytes: "bytes", post: "bytes", valid: "boolean" } as const;

function drawEnvelope(rng: Rng, seeds: readonly Uint8Array[], kept: readonly EnvelopeInput[]): EnvelopeInput {
  const seed = kept.length > 0 && rng.chance(0.1) ? rng.pick(kept).bytes : rng.pick(seeds);
  const bytes = mutate(rng, seed, seeds, true);
  return { pre: rng.bytes(rng.int(8)), bytes, post: rng.bytes(rng.int(8)), valid: bytes === seed && seeds.includes(seed) };
}

/** Decodes the input's range in place, and a copy of it alone, which must fail alike. */
function decodeBoth<T>(input: EnvelopeInput, decode: (b: Uint8Array, start?: number, end?: number) => T, time: <R>(f: () => R) => R, isOwn: (e: unknown) => boolean, what: string): { ok: T } | { error: string } {
  const { pre, bytes } = input;
  const buf = concatAll([pre, bytes, input.post]);
  try {
    return { ok: time(() => decode(buf, pre.length, pre.length + bytes.length)) };
  } catch (e) {
    expectError(e, isOwn, what);
    let copy: unknown;
    try {
      decode(copyOf(bytes));
    } catch (e2) {
      copy = e2;
    }
    if (copy === undefined) throw new Finding("a copy of the range decodes");
    if (!(copy instanceof ProtocolError) || copy.message !== (e as Error).message) throw new Finding(`a copy fails differently: ${describe(copy)}`);
    return { error: (e as Error).message };
  }
}

const safeInt = (v: bigint): boolean => v >= -(2n ** 53n) && v <= 2n ** 53n;
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

interface RequestFields {
  service: string;
  method: string;
  payload: Uint8Array;
  timeoutNano: number;
  metadata: readonly { key: string; value: string }[];
}

/** A request's fields as one comparable string. */
function requestText(r: RequestFields): string {
  return JSON.stringify([r.service, r.method, hex(r.payload), r.timeoutNano, r.metadata.map((kv) => [kv.key, kv.value])]);
}

interface ResponseFields {
  status?: { code: number; message: string; details: readonly { typeUrl: string; value: Uint8Array }[] } | undefined;
  payload: Uint8Array;
}

/** A response's fields as one comparable string. */
function responseText(r: ResponseFields): string {
  const st = r.status;
  return JSON.stringify([hex(r.payload), st === undefined ? null : [st.code, st.message, st.details.map((d) => [d.typeUrl, hex(d.value)])]]);
}

/**
 * Where protobuf-es and we disagree on a mutated input, protobuf-es is the lax one: it reads known
 * fields whatever their wire type and groups as messages, which we skip as protobuf-go does. Only
 * an unmutated input must agree exactly.
 */
function compare(valid: boolean, ours: string, ref: () => string, kind: string, tally: (key: string) => void): void {
  let text;
  try {
    text = ref();
  } catch {
    if (valid) throw new Finding(`protobuf-es rejects a valid ${kind}`);
    tally("protobuf-es rejects what we decode");
    return;
  }
  if (text !== ours) {
    if (valid) throw new Finding(`fields of a valid ${kind} differ from protobuf-es`);
    tally("protobuf-es reads other fields");
  }
}

/** Notes whether protobuf-es reads what we refused. */
function compareRejected(b: Uint8Array, parse: (b: Uint8Array) => unknown, tally: (key: string) => void): void {
  try {
    parse(b);
    tally("protobuf-es decodes what we reject");
  } catch {
    // Both reject.
  }
}

/** What differs between the request and the response target. */
interface EnvelopeKind<T, R> {
  readonly name: string;
  readonly errorClass: string;
  readonly kind: string;
  readonly seeds: (corpus: Corpus) => readonly Uint8Array[];
  readonly decode: (b: Uint8Array, start?: number, end?: number) => T;
  readonly isOwn: (e: unknown) => boolean;
  /** The decoded fields as one comparable string. */
  readonly text: (r: T) => string;
  /** Our own encoding of what was decoded, decoded again. */
  readonly again: (r: T) => T;
  /** protobuf-es's reading of the bytes. */
  readonly parse: (b: Uint8Array) => R;
  /** That reading as `text` gives ours (`ours` fills what it cannot represent). */
  readonly referenceText: (ref: R, ours: T) => string;
}

/** An envelope decoder on mutated envelopes, in place and against protobuf-es where both decode. */
function envelopeTarget<T, R>(corpus: Corpus, k: EnvelopeKind<T, R>): FuzzTarget {
  const seeds = k.seeds(corpus);
  return defineTarget<EnvelopeInput>(
    {
      name: k.name,
      errorClass: k.errorClass,
      afterError: "usable: a pure function, no state",
      draw: (rng, kept) => drawEnvelope(rng, seeds, kept),
      check(input, probe) {
        const r = decodeBoth(input, k.decode, probe.time, k.isOwn, k.name.replace("envelope ", ""));
        if ("error" in r) {
          compareRejected(input.bytes, k.parse, probe.tally);
          return r;
        }
        const ours = k.text(r.ok);
        if (k.text(k.again(r.ok)) !== ours) throw new Finding(`re-encoded ${k.kind} decodes differently`);
        compare(input.valid, ours, () => k.referenceText(k.parse(input.bytes), r.ok), k.kind, probe.tally);
        return "ok";
      },
    },
    shape,
  );
}

/** decodeRequest on mutated envelopes, in place and against protobuf-es where both decode. */
export const requestTarget = (corpus: Corpus): FuzzTarget =>
  envelopeTarget(corpus, {
    name: "envelope decodeRequest",
    errorClass: "ProtocolError `ttrpc: invalid request...: <what> at offset N`",
    kind: "request",
    seeds: (c) => c.requests,
    decode: decodeRequest,
    isOwn: (x) => x instanceof ProtocolError && x.message.startsWith("ttrpc: invalid request"),
    text: requestText,
    again: (r) => decodeRequest(encodeRequest(r)),
    parse: (b) => fromBinary(RequestSchema, b),
    // A timeout past 2^53 is a bigint to protobuf-es and a rounded number to us.
    referenceText: (ref, ours) => requestText({ ...ref, timeoutNano: safeInt(ref.timeoutNano) ? Number(ref.timeoutNano) : ours.timeoutNano }),
  });

/** decodeResponse on mutated envelopes, in place and against protobuf-es where both decode. */
export const responseTarget = (corpus: Corpus): FuzzTarget =>
  envelopeTarget(corpus, {
    name: "envelope decodeResponse",
    errorClass: "ProtocolError `ttrpc: invalid response...: <what> at offset N`",
    kind: "response",
    seeds: (c) => c.responses,
    decode: decodeResponse,
    isOwn: (x) => x instanceof ProtocolError && /^ttrpc: invalid (response|status detail)/.test(x.message),
    text: responseText,
    again: (r) => decodeResponse(encodeResponse(r.status, r.payload)),
    parse: (b) => fromBinary(ResponseSchema, b),
    referenceText: (ref) => responseText(ref),
  });
