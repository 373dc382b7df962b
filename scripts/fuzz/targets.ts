import { type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { RequestSchema, ResponseSchema } from "../../gen/ttrpc/request_pb.js";
import { MuxError } from "../../src/mux/errors.js";
import { MAX_READ_PAYLOAD, MuxDecoder, encodeMuxFrames } from "../../src/mux/trunk-frame.js";
import { type DecodeFn, decodeMessage } from "./message-codec.js";
import { FrameBudget } from "../../src/ttrpc/budget.js";
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from "../../src/ttrpc/envelope.js";
import { ProtocolError, RpcError } from "../../src/ttrpc/errors.js";
import { DEFAULT_MAX_DATA_LENGTH, FIRST_BODY_CAPACITY, FrameDecoder, HEADER_LENGTH, encodeFrame } from "../../src/ttrpc/frame.js";
import { Code } from "../../src/ttrpc/status.js";
import { TranslateError } from "../../src/translate/errors.js";
import { eventMethods } from "../../src/translate/state-change-events.js";
import { responseToV1alpha1, responseToV1beta1, toV1alpha1, toV1beta1 } from "../../src/translate/index.js";
import { DecodeError } from "../../src/wire/errors.js";
import { messages_v1alpha1_api } from "../../gen/v1alpha1/api_codec.js";
import { messages_v1beta1_api } from "../../gen/v1beta1/api_codec.js";
import { messageRegistry } from "../../src/wire/registry.js";
import { type Corpus, nriMessages } from "./corpus.js";
import { mutate, mutateBytes, randomChunks } from "./mutate.js";
import type { Rng } from "./rng.js";

/** An input that broke a rule: an undocumented exception, a wrong result, a leak. */
export class Finding extends Error {
  override name = "Finding";
}

/** Times the decoding part of one input (generation and checks are not counted). */
export interface Stopwatch {
  time<T>(f: () => T): T;
}

/** What one input ended in. */
export type Verdict = "ok" | "error";

/** One decoder an untrusted peer reaches, driven one input at a time. */
export interface FuzzTarget {
  readonly name: string;
  /** The only errors an input may end in. */
  readonly errorClass: string;
  /** The decoder's state after such an error. */
  readonly afterError: string;
  /** Draws one input from `rng` and decodes it; throws Finding when a rule is broken. */
  one(rng: Rng, watch: Stopwatch, tally: (key: string) => void): Verdict;
}

/** The generated codecs of both revisions' messages. */
const generated = messageRegistry([messages_v1alpha1_api, messages_v1beta1_api]);

/** One way of decoding NRI messages; a generated codec is one more entry. */
export interface MessageCodec {
  readonly name: string;
  readonly decode: DecodeFn;
  readonly encode: <D extends DescMessage>(schema: D, message: ReturnType<DecodeFn>) => Uint8Array;
  /** The only error class the codec may throw on bad bytes; anything else is a finding. */
  readonly errorClass?: abstract new (...args: never[]) => Error;
}

/** The message codecs fuzzed, each a target of its own. */
export const codecs: readonly MessageCodec[] = [
  { name: "protobuf-es", decode: fromBinary, encode: (schema, m) => toBinary(schema, m as never) },
  { name: "generated", decode: generated.fromBinary, encode: (schema, m) => generated.toBinary(schema, m as never), errorClass: DecodeError },
];

const EMPTY = new Uint8Array(0);
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;
const u32 = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const hexOf = (b: Uint8Array): string => Buffer.from(b.subarray(0, 64)).toString("hex") + (b.length > 64 ? "…" : "");

function describe(e: unknown): string {
  return e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e);
}

/** Throws Finding unless `e` is what `ok` accepts. */
function expectError(e: unknown, ok: (e: unknown) => boolean, what: string): void {
  if (!ok(e)) throw new Finding(`${what} threw ${describe(e)}`, { cause: e });
}

function concatAll(parts: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

interface PlainFrame {
  streamId: number;
  type: number;
  flags: number;
  data: Uint8Array;
  oversize: number;
}

/** The frames of a whole byte string, read the obvious way, and whether it ends inside a frame. */
function naiveFrames(b: Uint8Array, max: number): { frames: PlainFrame[]; truncated: boolean } {
  const frames: PlainFrame[] = [];
  let off = 0;
  while (b.length - off >= HEADER_LENGTH) {
    const length = u32(b, off);
    const f = { streamId: u32(b, off + 4), type: b[off + 8]!, flags: b[off + 9]!, data: EMPTY, oversize: 0 };
    off += HEADER_LENGTH;
    if (length > max) {
      frames.push({ ...f, oversize: length });
      if (b.length - off < length) return { frames, truncated: true };
      off += length;
      continue;
    }
    if (b.length - off < length) return { frames, truncated: true };
    frames.push({ ...f, data: b.subarray(off, off + length) });
    off += length;
  }
  return { frames, truncated: off < b.length };
}

/** Length fields a peer might announce for a frame with `left` bytes after its header. */
function frameLength(rng: Rng, left: number, max: number): number {
  return rng.pick([left + 1 + rng.int(1000), 0xffffffff, max + 1, max, 0, rng.u32(), Math.min(max, left + 1 + rng.int(1 << 20))]);
}

/** ttrpc FrameDecoder: any chunking of mutated frame streams, against a whole-buffer reading. */
function frameTarget(corpus: Corpus): FuzzTarget {
  const envelopes = [...corpus.requests, ...corpus.responses];
  return {
    name: "ttrpc frames",
    errorClass: "none while decoding (an oversized frame is reported and skipped); end(): ProtocolError `ttrpc: truncated frame: ...`",
    afterError: "usable: after an oversized frame it decodes the next; end() changes nothing",
    one(rng, watch) {
      const max = rng.chance(0.7) ? DEFAULT_MAX_DATA_LENGTH : rng.int(300);
      const frames: Uint8Array[] = [];
      const count = 1 + rng.int(6);
      for (let k = 0; k < count; k++) {
        const body = rng.chance(0.5) ? mutate(rng, rng.pick(envelopes), envelopes, true) : rng.pick(envelopes);
        const id = rng.pick([1, 3, 2, 0, 0xffffffff, rng.u32()]);
        frames.push(encodeFrame(id, rng.chance(0.8) ? 1 + rng.int(3) : rng.int(256), rng.int(8), body));
      }
      let stream = concatAll(frames);
      if (rng.chance(0.5)) {
        // Rewrite one frame's length field: past the end, 2^32 - 1, just over the limit, ...
        let at = 0;
        for (let k = rng.int(count); k > 0; k--) at += frames[count - 1 - k]!.length;
        at = Math.min(at, stream.length - HEADER_LENGTH);
        if (at >= 0) {
          stream = stream.slice();
          new DataView(stream.buffer).setUint32(at, frameLength(rng, stream.length - at - HEADER_LENGTH, max));
        }
      }
      if (rng.chance(0.3)) stream = mutateBytes(rng, stream, envelopes);
      const chunks = randomChunks(rng, stream);
      const budget = new FrameBudget();
      const d = new FrameDecoder({ maxDataLength: max, budget });
      const got: PlainFrame[] = [];
      let fed = 0;
      for (const c of chunks) {
        let out;
        try {
          out = watch.time(() => d.decode(c));
        } catch (e) {
          throw new Finding(`decode threw ${describe(e)}`, { cause: e });
        }
        for (const f of out) got.push({ streamId: f.streamId, type: f.type, flags: f.flags, data: f.data, oversize: f.oversize });
        fed += c.length;
        if (d.buffered > Math.max(FIRST_BODY_CAPACITY, 2 * fed)) {
          throw new Finding(`holds ${d.buffered} bytes for a partial frame after ${fed} bytes of input`);
        }
      }
      const want = naiveFrames(stream, max);
      if (got.length !== want.frames.length) throw new Finding(`${got.length} frames, a whole-buffer reading finds ${want.frames.length}`);
      got.forEach((f, i) => {
        const w = want.frames[i]!;
        if (f.streamId !== w.streamId || f.type !== w.type || f.flags !== w.flags || f.oversize !== w.oversize || !same(f.data, w.data)) {
          throw new Finding(`frame ${i} differs from the whole-buffer reading`);
        }
      });
      let truncated = false;
      try {
        d.end();
      } catch (e) {
        expectError(e, (x) => x instanceof ProtocolError && x.message.startsWith("ttrpc: truncated frame: "), "end()");
        truncated = true;
      }
      if (truncated !== want.truncated) throw new Finding(`end() ${truncated ? "reported" : "missed"} a truncated frame`);
      if (!truncated) {
        // Still usable: a valid frame decodes exactly.
        const valid = encodeFrame(7, 2, 0, rng.pick(envelopes).subarray(0, max));
        const again = d.decode(valid);
        if (again.length !== 1 || again[0]!.streamId !== 7 || !same(again[0]!.data, valid.subarray(HEADER_LENGTH))) {
          throw new Finding("a valid frame after the input did not decode");
        }
      }
      d.dispose();
      if (budget.used !== 0) throw new Finding(`${budget.used} budget bytes still reserved after dispose()`);
      return truncated || got.some((f) => f.oversize !== 0) ? "error" : "ok";
    },
  };
}

/** Every conn's bytes of a trunk read the obvious way, up to a frame over `max`. */
function naiveMux(b: Uint8Array, max: number): { bytes: Map<number, Uint8Array[]>; oversize?: string; truncated: boolean } {
  const bytes = new Map<number, Uint8Array[]>();
  let off = 0;
  while (b.length - off >= 8) {
    const id = u32(b, off);
    const length = u32(b, off + 4);
    off += 8;
    if (length > max) return { bytes, oversize: `mux: frame length ${length} for conn ${id} exceeds maximum ${max}`, truncated: false };
    const end = Math.min(b.length, off + length);
    if (end > off) {
      const list = bytes.get(id);
      if (list === undefined) bytes.set(id, [b.subarray(off, end)]);
      else list.push(b.subarray(off, end));
    }
    if (end < off + length) return { bytes, truncated: true };
    off = end;
  }
  return { bytes, truncated: off < b.length };
}

/** The NRI mux decoder: any chunking of mutated trunks, against a whole-buffer reading. */
function muxTarget(corpus: Corpus): FuzzTarget {
  return {
    name: "mux",
    errorClass: "MuxError `mux: frame length N for conn C exceeds maximum M`; end(): MuxError `mux: truncated frame: ...`",
    afterError: "poisoned: every later decode() and end() throws the same MuxError (the trunk has lost its framing)",
    one(rng, watch) {
      const max = rng.chance(0.7) ? MAX_READ_PAYLOAD : rng.int(300);
      let trunk = rng.chance(0.3) ? concatAll([rng.pick(corpus.trunks), rng.pick(corpus.trunks)]) : rng.pick(corpus.trunks);
      if (rng.chance(0.4) && trunk.length >= 8) {
        trunk = trunk.slice();
        new DataView(trunk.buffer).setUint32(4, rng.pick([trunk.length - 7 + rng.int(100), 0xffffffff, max + 1, max, rng.u32()]));
      }
      if (rng.chance(0.6)) trunk = mutateBytes(rng, trunk, corpus.trunks);
      const d = new MuxDecoder(max);
      const got = new Map<number, Uint8Array[]>();
      let error: unknown;
      for (const c of randomChunks(rng, trunk)) {
        try {
          for (const s of watch.time(() => d.decode(c))) {
            const list = got.get(s.connId);
            if (list === undefined) got.set(s.connId, [s.data]);
            else list.push(s.data);
          }
        } catch (e) {
          error = e;
          break;
        }
      }
      const want = naiveMux(trunk, max);
      const all = new Set([...got.keys(), ...want.bytes.keys()]);
      for (const id of all) {
        const g = concatAll(got.get(id) ?? []);
        const w = concatAll(want.bytes.get(id) ?? []);
        // After an error the chunk that raised it gives nothing: what came before must match.
        const ok = error === undefined ? same(g, w) : g.length <= w.length && same(g, w.subarray(0, g.length));
        if (!ok) throw new Finding(`conn ${id} got ${g.length} bytes, a whole-buffer reading finds ${w.length}`);
      }
      if (error !== undefined) {
        expectError(error, (e) => e instanceof MuxError && e.message === want.oversize, "decode");
        // Poisoned: the same error again, even for a valid frame.
        try {
          d.decode(encodeMuxFrames(1, Uint8Array.of(1)));
          throw new Finding("decode after a MuxError succeeded");
        } catch (e) {
          if (e !== error) throw new Finding(`decode after a MuxError threw ${describe(e)}`);
        }
        return "error";
      }
      if (want.oversize !== undefined) throw new Finding(`missed ${want.oversize}`);
      try {
        d.end();
      } catch (e) {
        expectError(e, (x) => x instanceof MuxError && x.message.startsWith("mux: truncated frame: "), "end()");
        if (!want.truncated) throw new Finding("end() reported a truncated frame that is not");
        return "error";
      }
      if (want.truncated) throw new Finding("end() missed a truncated frame");
      const valid = Uint8Array.of(9, 8).subarray(0, max);
      const segs = d.decode(encodeMuxFrames(2, valid, Math.max(1, max)));
      if (!same(concatAll(segs.map((x) => x.data)), valid) || segs.some((x) => x.connId !== 2)) throw new Finding("a valid frame after the input did not decode");
      return "ok";
    },
  };
}

/** `b` inside random padding, as a range of a larger buffer, the way frames hand it on. */
function embed(rng: Rng, b: Uint8Array): [Uint8Array, number, number] {
  const pre = rng.int(8);
  const buf = rng.bytes(pre + b.length + rng.int(8));
  buf.set(b, pre);
  return [buf, pre, pre + b.length];
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

/** decodeRequest on mutated envelopes, in place and against protobuf-es where both decode. */
function requestTarget(corpus: Corpus): FuzzTarget {
  return {
    name: "envelope decodeRequest",
    errorClass: "ProtocolError `ttrpc: invalid request...: <what> at offset N`",
    afterError: "usable: a pure function, no state",
    one(rng, watch, tally) {
      const seed = rng.pick(corpus.requests);
      const b = mutate(rng, seed, corpus.requests, true);
      const [buf, start, end] = embed(rng, b);
      let r;
      try {
        r = watch.time(() => decodeRequest(buf, start, end));
      } catch (e) {
        expectError(e, (x) => x instanceof ProtocolError && x.message.startsWith("ttrpc: invalid request"), "decodeRequest");
        try {
          decodeRequest(b.slice());
          throw new Finding("a copy of the range decodes");
        } catch (e2) {
          if (!(e2 instanceof ProtocolError) || e2.message !== (e as Error).message) throw new Finding(`a copy fails differently: ${describe(e2)}`);
        }
        try {
          fromBinary(RequestSchema, b);
          tally("protobuf-es decodes what we reject");
        } catch {
          // Both reject.
        }
        return "error";
      }
      // Our own encoding of what was decoded decodes to the same.
      const again = decodeRequest(encodeRequest(r));
      if (requestText(again) !== requestText(r)) throw new Finding("re-encoded request decodes differently");
      let ref;
      try {
        ref = fromBinary(RequestSchema, b);
      } catch {
        if (b === seed) throw new Finding("protobuf-es rejects a valid request");
        tally("protobuf-es rejects what we decode");
        return "ok";
      }
      const refText = requestText({ ...ref, timeoutNano: safeInt(ref.timeoutNano) ? Number(ref.timeoutNano) : r.timeoutNano });
      if (refText !== requestText(r)) {
        // protobuf-es reads known fields whatever their wire type and groups as messages; we skip
        // them as protobuf-go does. Only an unmutated input must agree exactly.
        if (b === seed) throw new Finding("fields of a valid request differ from protobuf-es");
        tally("protobuf-es reads other fields");
      }
      return "ok";
    },
  };
}

/** decodeResponse on mutated envelopes, in place and against protobuf-es where both decode. */
function responseTarget(corpus: Corpus): FuzzTarget {
  return {
    name: "envelope decodeResponse",
    errorClass: "ProtocolError `ttrpc: invalid response...: <what> at offset N`",
    afterError: "usable: a pure function, no state",
    one(rng, watch, tally) {
      const seed = rng.pick(corpus.responses);
      const b = mutate(rng, seed, corpus.responses, true);
      const [buf, start, end] = embed(rng, b);
      let r;
      try {
        r = watch.time(() => decodeResponse(buf, start, end));
      } catch (e) {
        expectError(e, (x) => x instanceof ProtocolError && /^ttrpc: invalid (response|status detail)/.test(x.message), "decodeResponse");
        try {
          decodeResponse(b.slice());
          throw new Finding("a copy of the range decodes");
        } catch (e2) {
          if (!(e2 instanceof ProtocolError) || e2.message !== (e as Error).message) throw new Finding(`a copy fails differently: ${describe(e2)}`);
        }
        try {
          fromBinary(ResponseSchema, b);
          tally("protobuf-es decodes what we reject");
        } catch {
          // Both reject.
        }
        return "error";
      }
      const again = decodeResponse(encodeResponse(r.status, r.payload));
      if (responseText(again) !== responseText(r)) throw new Finding("re-encoded response decodes differently");
      let ref;
      try {
        ref = fromBinary(ResponseSchema, b);
      } catch {
        if (b === seed) throw new Finding("protobuf-es rejects a valid response");
        tally("protobuf-es rejects what we decode");
        return "ok";
      }
      if (responseText(ref) !== responseText(r)) {
        if (b === seed) throw new Finding("fields of a valid response differ from protobuf-es");
        tally("protobuf-es reads other fields");
      }
      return "ok";
    },
  };
}

const ALPHA_PLUGIN = "nri.pkg.api.v1alpha1.Plugin";
const BETA_PLUGIN = "nri.pkg.api.v1beta1.Plugin";
const EVENT_METHODS = [...eventMethods.values()];
const SOME_METHODS = [...EVENT_METHODS, "StateChange", "Shutdown", "Configure", "Synchronize", "RegisterPlugin", "UpdateContainers", "Nope", ""];
const SOME_SERVICES = [ALPHA_PLUGIN, BETA_PLUGIN, "nri.pkg.api.v1alpha1.Runtime", "nri.pkg.api.v1beta1.Runtime", "nri.pkg.api.v1beta1.HostFunctions", "nri.pkg.api.v1gamma.Plugin", "Plugin", ""];

/** The translation functions on mutated requests and random method names. */
function translateTarget(corpus: Corpus): FuzzTarget {
  const requestsOf = (method: string): readonly Uint8Array[] => corpus.messages.get(`nri.pkg.api.v1beta1.${method}Request`) ?? corpus.allMessages;
  const stateChanges = corpus.messages.get("nri.pkg.api.v1alpha1.StateChangeEvent") ?? corpus.allMessages;
  const isTranslateError = (e: unknown): boolean => e instanceof TranslateError && e.code === Code.INVALID_ARGUMENT && e.rawMessage.startsWith("translate: ");
  return {
    name: "translate",
    errorClass: "TranslateError (an RpcError INVALID_ARGUMENT) `translate: ...`",
    afterError: "usable: pure functions, no state",
    one(rng, watch, tally) {
      const op = rng.int(5);
      try {
        if (op === 0) {
          const payload = mutate(rng, rng.pick(stateChanges), corpus.allMessages, true);
          const out = watch.time(() => toV1beta1({ service: ALPHA_PLUGIN, method: "StateChange", payload }));
          // What came out of StateChange goes back into it.
          const back = toV1alpha1({ service: BETA_PLUGIN, method: out.method, payload: out.payload }, "statechange");
          if (back.method !== "StateChange") throw new Finding(`${out.method} did not translate back to StateChange`);
          tally("StateChange -> dedicated");
        } else if (op === 1) {
          const method = rng.pick(EVENT_METHODS);
          const payload = mutate(rng, rng.pick(requestsOf(method)), corpus.allMessages, true);
          const out = watch.time(() => toV1alpha1({ service: BETA_PLUGIN, method, payload }, "statechange"));
          const back = toV1beta1(out);
          if (back.method !== method) throw new Finding(`${method} came back from StateChange as ${back.method}`);
          tally("dedicated -> StateChange");
        } else if (op === 2) {
          const call = { service: rng.pick(SOME_SERVICES), method: rng.pick(SOME_METHODS), payload: mutate(rng, rng.pick(corpus.allMessages), corpus.allMessages, true) };
          watch.time(() => toV1alpha1(call, rng.chance(0.5) ? "statechange" : "dedicated"));
        } else if (op === 3) {
          const call = { service: rng.pick(SOME_SERVICES), method: rng.pick(SOME_METHODS), payload: mutate(rng, rng.pick(stateChanges), corpus.allMessages, true) };
          watch.time(() => toV1beta1(call));
        } else {
          const call = { service: rng.pick(SOME_SERVICES), method: rng.pick(SOME_METHODS) };
          const payload = rng.pick(corpus.allMessages);
          const out = watch.time(() => (rng.chance(0.5) ? responseToV1alpha1(call, payload) : responseToV1beta1(call, payload)));
          if (out.payload !== payload) throw new Finding("a response's bytes changed");
        }
        return "ok";
      } catch (e) {
        if (e instanceof Finding) throw e;
        expectError(e, isTranslateError, "translation");
        return "error";
      }
    },
  };
}

/** Every NRI request and response type through one codec, via the endpoints' decodeMessage. */
function messageTarget(corpus: Corpus, codec: MessageCodec): FuzzTarget {
  return {
    name: `messages (${codec.name})`,
    errorClass: "RpcError INVALID_ARGUMENT `invalid <type name>: <reason>` (decodeMessage wraps whatever the codec throws)",
    afterError: "usable: a pure function, no state",
    one(rng, watch, tally) {
      const schema = rng.pick(nriMessages);
      const seeds = corpus.messages.get(schema.typeName) ?? corpus.allMessages;
      const b = mutate(rng, rng.pick(seeds), corpus.allMessages, true);
      let m;
      try {
        m = watch.time(() => decodeMessage(schema, b, codec.decode));
      } catch (e) {
        expectError(
          e,
          (x) => x instanceof RpcError && x.code === Code.INVALID_ARGUMENT && x.rawMessage.startsWith(`invalid ${schema.typeName}: `),
          "decodeMessage",
        );
        const cause = (e as Error).cause;
        if (codec.errorClass !== undefined && !(cause instanceof codec.errorClass)) {
          throw new Finding(`${codec.name} threw ${describe(cause)} on ${schema.typeName} (input ${hexOf(b)})`, { cause });
        }
        tally(`${codec.name} threw ${cause instanceof Error ? cause.constructor.name : typeof cause}`);
        return "error";
      }
      // A decoded message encodes, and decoding that gives the same bytes again.
      let b1: Uint8Array;
      let b2: Uint8Array;
      try {
        b1 = codec.encode(schema, m);
        b2 = codec.encode(schema, codec.decode(schema, b1));
      } catch (e) {
        throw new Finding(`decoded ${schema.typeName} does not re-encode: ${describe(e)} (input ${hexOf(b)})`, { cause: e });
      }
      if (!same(b1, b2)) throw new Finding(`${schema.typeName} re-encodes differently`);
      return "ok";
    },
  };
}

/** Every fuzz target over `corpus`. */
export function fuzzTargets(corpus: Corpus): FuzzTarget[] {
  return [frameTarget(corpus), requestTarget(corpus), responseTarget(corpus), muxTarget(corpus), translateTarget(corpus), ...codecs.map((c) => messageTarget(corpus, c))];
}

