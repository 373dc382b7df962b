import { type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { messages_v1alpha1_api } from "../../../gen/v1alpha1/api_codec.js";
import { messages_v1beta1_api } from "../../../gen/v1beta1/api_codec.js";
import { RpcError } from "../../../src/ttrpc/errors.js";
import { Code } from "../../../src/ttrpc/status.js";
import { DecodeError } from "../../../src/wire/errors.js";
import { messageRegistry } from "../../../src/wire/registry.js";
import { type Corpus, nriMessages } from "../corpus.js";
import { type DecodeFn, decodeMessage } from "../message-codec.js";
import { mutate } from "../mutate.js";
import { Finding, type FuzzTarget, defineTarget, describe, expectError, hexOf, same } from "../target.js";

/** One way of decoding NRI messages; a generated codec is one more entry. */
export interface MessageCodec {
  readonly name: string;
  readonly decode: DecodeFn;
  readonly encode: <D extends DescMessage>(schema: D, message: ReturnType<DecodeFn>) => Uint8Array;
  /** The only error class the codec may throw on bad bytes; anything else is a finding. */
  readonly errorClass?: abstract new (...args: never[]) => Error;
  /** Whether protobuf-es judges it: a seed reads alike, and other inputs are tallied where they differ. */
  readonly judged?: boolean;
}

/** Both revisions' messages through their generated code alone, as the runtime side codes them. */
const generated = messageRegistry([messages_v1alpha1_api, messages_v1beta1_api]);

/** The message codecs fuzzed, each a target of its own. */
export const codecs: readonly MessageCodec[] = [
  { name: "protobuf-es", decode: fromBinary, encode: (schema, m) => toBinary(schema, m as never) },
  { name: "generated", decode: generated.fromBinary, encode: (schema, m) => generated.toBinary(schema, m as never), errorClass: DecodeError, judged: true },
];

/** A message's bytes, the full name of the type they are decoded as, and whether they are a seed left unmutated. */
type MessageInput = { readonly type: string; readonly bytes: Uint8Array; readonly valid: boolean };

/** protobuf-es's reading of `b` as bytes it writes itself, so two readings compare with unknown fields included. */
const reference = (schema: DescMessage, b: Uint8Array): Uint8Array => toBinary(schema, fromBinary(schema, b));

const schemas = new Map(nriMessages.map((s) => [s.typeName, s]));

/** Every NRI request and response type through one codec, via the endpoints' decodeMessage. */
export function messageTarget(corpus: Corpus, codec: MessageCodec): FuzzTarget {
  return defineTarget<MessageInput>(
    {
      name: `messages (${codec.name})`,
      errorClass: "RpcError INVALID_ARGUMENT `invalid <type name>: <reason>` (decodeMessage wraps whatever the codec throws)",
      afterError: "usable: a pure function, no state",
      draw(rng, kept) {
        if (kept.length > 0 && rng.chance(0.1)) {
          const k = rng.pick(kept);
          return { type: k.type, bytes: mutate(rng, k.bytes, corpus.allMessages, true), valid: false };
        }
        const schema = rng.pick(nriMessages);
        const seed = rng.pick(corpus.messages.get(schema.typeName) ?? corpus.allMessages);
        const bytes = mutate(rng, seed, corpus.allMessages, true);
        return { type: schema.typeName, bytes, valid: bytes === seed && corpus.messages.has(schema.typeName) };
      },
      check({ type, bytes, valid }, probe) {
        const schema = schemas.get(type);
        if (schema === undefined) throw new Error(`fuzz: ${type} is not an NRI request or response type`);
        let m;
        try {
          m = probe.time(() => decodeMessage(schema, bytes, codec.decode));
        } catch (e) {
          expectError(e, (x) => x instanceof RpcError && x.code === Code.INVALID_ARGUMENT && x.rawMessage.startsWith(`invalid ${type}: `), "decodeMessage");
          const cause = (e as Error).cause;
          if (codec.errorClass !== undefined && !(cause instanceof codec.errorClass)) {
            throw new Finding(`${codec.name} threw ${describe(cause)} on ${type} (input ${hexOf(bytes)})`, { cause });
          }
          probe.tally(`${codec.name} threw ${cause instanceof Error ? cause.constructor.name : typeof cause}`);
          if (codec.judged === true) {
            let ref = true;
            try {
              fromBinary(schema, bytes);
            } catch {
              ref = false;
            }
            if (ref && valid) throw new Finding(`${codec.name} rejects a valid ${type}: ${describe(cause)}`);
            if (ref) probe.tally("protobuf-es decodes what it rejects");
          }
          // The codec's own words (`decode <innermost type>: ...`) tell the outcomes apart.
          return { error: cause instanceof Error ? cause.message : String(cause) };
        }
        // A decoded message encodes, and decoding that gives the same bytes again.
        let b1: Uint8Array;
        let b2: Uint8Array;
        try {
          b1 = codec.encode(schema, m);
          b2 = codec.encode(schema, codec.decode(schema, b1));
        } catch (e) {
          throw new Finding(`decoded ${type} does not re-encode: ${describe(e)} (input ${hexOf(bytes)})`, { cause: e });
        }
        if (!same(b1, b2)) throw new Finding(`${type} re-encodes differently`);
        if (codec.judged === true) {
          // What we decoded and wrote again is what protobuf-es reads from the input.
          let ref: Uint8Array | undefined;
          try {
            ref = reference(schema, bytes);
          } catch {
            if (valid) throw new Finding(`protobuf-es rejects a valid ${type}`);
            probe.tally("protobuf-es rejects what it decodes");
          }
          let again: Uint8Array | undefined;
          if (ref !== undefined) {
            try {
              again = reference(schema, b1);
            } catch (e) {
              // A field of the wrong wire type is unknown to us (as to protobuf-go) and written
              // again at the end, where protobuf-es, which reads it as its declared type, may fail.
              if (valid) throw new Finding(`protobuf-es reads the ${type} input but not its re-encoding: ${describe(e)} (input ${hexOf(bytes)})`);
              probe.tally("protobuf-es cannot read the re-encoding");
            }
          }
          if (ref !== undefined && again !== undefined && !same(ref, again)) {
            // protobuf-es reads known fields whatever their wire type; only a seed must agree exactly.
            if (valid) throw new Finding(`${type} differs from protobuf-es's reading (input ${hexOf(bytes)})`);
            probe.tally("protobuf-es reads other fields");
          }
        }
        return "ok";
      },
    },
    { type: "string", bytes: "bytes", valid: "boolean" },
  );
}
