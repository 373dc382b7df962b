import { readFileSync } from "node:fs";
import { type DescMessage, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import * as beta from "../../gen/v1beta1/api_pb.js";
import { encodeMuxFrames } from "../../src/mux/trunk-frame.js";
import { encodeRequest, encodeResponse } from "../../src/ttrpc/envelope.js";
import { arbitraryMessage } from "../../test/arbitraries/message.js";
import { copyOf } from "./target.js";

/**
 * Valid inputs the fuzz targets mutate: the recorded Go sessions (trunk bytes, ttrpc envelopes
 * and NRI payloads as the reference wrote them) and messages of every NRI request and response
 * type drawn from the descriptor-derived arbitraries, with envelopes and trunks around them.
 * A campaign keeps the generated part in a file, so it goes on with the very same seeds whatever
 * fast-check and the arbitraries become.
 */

const SESSIONS = ["new-runtime--new-plugin", "new-runtime--legacy-plugin"];
const fixture = (name: string): URL => new URL(`../../test/fixtures/vectors/${name}`, import.meta.url);
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "hex"));

interface Recorded {
  type: number;
  bodyHex: string;
  payloadType?: string;
  payloadHex?: string;
}

/** Every request and response type of the Runtime, Plugin and HostFunctions services, both revisions. */
export const nriMessages: readonly DescMessage[] = (() => {
  const byName = new Map<string, DescMessage>();
  for (const svc of [alpha.Runtime, alpha.Plugin, alpha.HostFunctions, beta.Runtime, beta.Plugin, beta.HostFunctions]) {
    for (const m of svc.methods) {
      byName.set(m.input.typeName, m.input);
      byName.set(m.output.typeName, m.output);
    }
  }
  byName.set(alpha.StateChangeEventSchema.typeName, alpha.StateChangeEventSchema);
  return [...byName.values()].sort((a, b) => (a.typeName < b.typeName ? -1 : 1));
})();

/** Seeds of each kind: a part of the corpus (recorded or generated) or all of it. */
export interface Seeds {
  /** Raw trunk bytes, cut at mux frame edges. */
  readonly trunks: readonly Uint8Array[];
  readonly requests: readonly Uint8Array[];
  readonly responses: readonly Uint8Array[];
  /** Encoded messages by full type name. */
  readonly messages: ReadonlyMap<string, readonly Uint8Array[]>;
}

/** The seeds every target draws from. */
export interface Corpus extends Seeds {
  /** Every encoded message, for splicing. */
  readonly allMessages: readonly Uint8Array[];
}

/** The seeds of the recorded Go sessions. */
export function recordedSeeds(): Seeds {
  const requests: Uint8Array[] = [];
  const responses: Uint8Array[] = [];
  const trunks: Uint8Array[] = [];
  const messages = new Map<string, Uint8Array[]>();
  for (const name of SESSIONS) {
    const recorded = (JSON.parse(readFileSync(fixture(`${name}.frames.json`), "utf8")) as { messages: Recorded[] }).messages;
    for (const m of recorded) {
      (m.type === 1 ? requests : responses).push(unhex(m.bodyHex));
      if (m.payloadType !== undefined && m.payloadHex !== undefined) addTo(messages, m.payloadType, unhex(m.payloadHex));
    }
    for (const dir of ["p2r", "r2p"]) {
      const bin = new Uint8Array(readFileSync(fixture(`${name}.${dir}.bin`)));
      // Runs of up to 6 whole mux frames, so each seed is small and starts at a frame edge.
      let off = 0;
      while (off < bin.length) {
        let end = off;
        for (let k = 0; k < 6 && end + 8 <= bin.length; k++) end += 8 + new DataView(bin.buffer, bin.byteOffset + end + 4, 4).getUint32(0);
        trunks.push(bin.subarray(off, Math.min(end, bin.length)));
        off = end;
      }
    }
  }
  return { trunks, requests, responses, messages };
}

function addTo(messages: Map<string, Uint8Array[]>, type: string, b: Uint8Array): void {
  let list = messages.get(type);
  if (list === undefined) messages.set(type, (list = []));
  list.push(b);
}

/**
 * Generated seeds for `seed`: `perType` messages of each NRI type, and 32 envelopes and trunks
 * around them and the recorded payloads, so every message type reaches every layer.
 */
export function generatedSeeds(seed: number, recorded: Seeds, perType = 8): Seeds {
  const messages = new Map<string, Uint8Array[]>();
  let s = seed;
  for (const schema of nriMessages) {
    for (const m of fc.sample(arbitraryMessage(schema, { maxDepth: 2, maxLength: 2 }), { seed: s++, numRuns: perType })) {
      addTo(messages, schema.typeName, toBinary(schema, m));
    }
  }
  const payloads = [...recorded.messages.values(), ...messages.values()].flat();
  const requests: Uint8Array[] = [];
  const responses: Uint8Array[] = [];
  const trunks: Uint8Array[] = [];
  const rnd = fc.sample(fc.tuple(fc.string({ maxLength: 12 }), fc.integer({ min: 0, max: 16 }), fc.bigInt({ min: -(1n << 40n), max: 1n << 40n })), { seed, numRuns: 32 });
  rnd.forEach(([text, code, t], i) => {
    const payload = payloads[(i * 7) % payloads.length]!;
    const metadata = i % 3 === 0 ? [{ key: text, value: "v" }] : [];
    requests.push(encodeRequest({ service: `nri.pkg.api.v1beta1.${text}`, method: text, payload, timeoutNano: Number(t), metadata }));
    responses.push(encodeResponse(code === 0 ? undefined : { code, message: text, details: i % 4 === 0 ? [{ typeUrl: text, value: payload }] : [] }, payload));
    trunks.push(encodeMuxFrames(1 + (i % 2), payload, 1 + (i % 3) * 40));
  });
  return { trunks, requests, responses, messages };
}

/** The corpus made of some seeds, each a plain Uint8Array of its own (see concatAll). */
export function joinSeeds(parts: readonly Seeds[]): Corpus {
  const messages = new Map<string, Uint8Array[]>();
  for (const p of parts) for (const [type, list] of p.messages) for (const b of list) addTo(messages, type, copyOf(b));
  return {
    trunks: parts.flatMap((p) => p.trunks.map(copyOf)),
    requests: parts.flatMap((p) => p.requests.map(copyOf)),
    responses: parts.flatMap((p) => p.responses.map(copyOf)),
    messages,
    allMessages: [...messages.values()].flat(),
  };
}

/** The corpus for `seed`: the recordings, plus `perType` generated messages of each type. */
export function buildCorpus(seed: number, perType = 8): Corpus {
  const recorded = recordedSeeds();
  return joinSeeds([recorded, generatedSeeds(seed, recorded, perType)]);
}

const b64 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64"));

/** Seeds as JSON: base64 strings by kind, messages by type name. */
export function seedsToJson(s: Seeds): object {
  return {
    trunks: s.trunks.map(b64),
    requests: s.requests.map(b64),
    responses: s.responses.map(b64),
    messages: Object.fromEntries([...s.messages].map(([type, list]) => [type, list.map(b64)])),
  };
}

/** Seeds from JSON made by seedsToJson. */
export function seedsFromJson(json: unknown, where: string): Seeds {
  const j = json as { trunks?: unknown; requests?: unknown; responses?: unknown; messages?: unknown };
  const list = (v: unknown, what: string): Uint8Array[] => {
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw new Error(`fuzz: ${where}: ${what} is not a list of base64 strings`);
    return v.map(unb64);
  };
  if (typeof j.messages !== "object" || j.messages === null) throw new Error(`fuzz: ${where}: messages is not an object`);
  return {
    trunks: list(j.trunks, "trunks"),
    requests: list(j.requests, "requests"),
    responses: list(j.responses, "responses"),
    messages: new Map(Object.entries(j.messages).map(([type, v]) => [type, list(v, `messages.${type}`)])),
  };
}
