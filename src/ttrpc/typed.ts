import type { DescMessage, DescMethod, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { MessageRegistry } from "../wire/registry.js";
import type { CallOptions } from "./client.js";
import { RpcError } from "./errors.js";
import type { CallContext, RawMethod, Server } from "./server.js";
import { Code } from "./status.js";
import { errorText } from "../internal/error-text.js";

type Shape<K extends DescMethod["methodKind"], I extends DescMessage, O extends DescMessage> = {
  methodKind: K;
  input: I;
  output: O;
};

/** A client method per service method, typed from the generated descriptor. */
export type ServiceClient<M extends GenServiceMethods> = {
  [K in keyof M]: M[K] extends Shape<"unary", infer I, infer O>
    ? (request: MessageInitShape<I>, options?: CallOptions) => Promise<MessageShape<O>>
    : M[K] extends Shape<"server_streaming", infer I, infer O>
      ? (request: MessageInitShape<I>, options?: CallOptions) => AsyncIterable<MessageShape<O>>
      : M[K] extends Shape<"client_streaming", infer I, infer O>
        ? (requests: AsyncIterable<MessageInitShape<I>>, options?: CallOptions) => Promise<MessageShape<O>>
        : M[K] extends Shape<"bidi_streaming", infer I, infer O>
          ? (requests: AsyncIterable<MessageInitShape<I>>, options?: CallOptions) => AsyncIterable<MessageShape<O>>
          : never;
};

/** Handlers for a service's methods, typed from the generated descriptor; any may be left out. */
export type ServiceImpl<M extends GenServiceMethods> = {
  [K in keyof M]?: M[K] extends Shape<"unary", infer I, infer O>
    ? (request: MessageShape<I>, ctx: CallContext) => MessageInitShape<O> | Promise<MessageInitShape<O>>
    : M[K] extends Shape<"server_streaming", infer I, infer O>
      ? (request: MessageShape<I>, ctx: CallContext) => AsyncIterable<MessageInitShape<O>>
      : M[K] extends Shape<"client_streaming", infer I, infer O>
        ? (requests: AsyncIterable<MessageShape<I>>, ctx: CallContext) => Promise<MessageInitShape<O>>
        : M[K] extends Shape<"bidi_streaming", infer I, infer O>
          ? (requests: AsyncIterable<MessageShape<I>>, ctx: CallContext) => AsyncIterable<MessageInitShape<O>>
          : never;
};

/**
 * What a typed client calls through: a ttrpc Client, or anything with the same methods (a
 * translating layer, a test double). Streaming methods are needed only by streaming calls.
 */
export interface Transport {
  /** A unary call. */
  call(service: string, method: string, payload: Uint8Array, options?: CallOptions): Promise<Uint8Array>;
  /** A server-streaming call. */
  serverStream?(service: string, method: string, payload: Uint8Array, options?: CallOptions): AsyncIterable<Uint8Array>;
  /** A client-streaming call. */
  clientStream?(service: string, method: string, input: AsyncIterable<Uint8Array>, options?: CallOptions): Promise<Uint8Array>;
  /** A bidirectional-streaming call. */
  bidiStream?(service: string, method: string, input: AsyncIterable<Uint8Array>, options?: CallOptions): AsyncIterable<Uint8Array>;
}

function streaming<K extends "serverStream" | "clientStream" | "bidiStream">(t: Transport, kind: K): NonNullable<Transport[K]> {
  const f = t[kind];
  if (f === undefined) throw new TypeError(`ttrpc: transport has no ${kind} method`);
  return f.bind(t) as NonNullable<Transport[K]>;
}

/** Options of createClient, serviceMethods and registerService. */
export interface ServiceNameOptions {
  /** The service name on the wire, when it differs from the descriptor's (e.g. another package). */
  serviceName?: string;
  /**
   * How messages are coded: by the generated code of this registry's tables, and by its reflective
   * fallback if it has one (`messageRegistry([], reflection)` codes every message reflectively).
   */
  messages: MessageRegistry;
}

/*
 * Bytes that do not decode are INVALID_ARGUMENT with the DecodeError's text, which names the
 * message and field.
 */
function encodeMessage(messages: MessageRegistry, schema: DescMessage, init: unknown): Uint8Array {
  return messages.encodeInit(schema, init as MessageInitShape<DescMessage>);
}

/**
 * @internal The error for a message that does not decode: INVALID_ARGUMENT with the decoder's
 * text (a DecodeError names the message and field), as every served and called method answers
 * it. Callers catch and throw this themselves, so a call makes no closure.
 */
export function undecodable(e: unknown): RpcError {
  return new RpcError(Code.INVALID_ARGUMENT, errorText(e), { cause: e });
}

function decodeMessage(messages: MessageRegistry, schema: DescMessage, bytes: Uint8Array): MessageShape<DescMessage> {
  try {
    return messages.fromBinary(schema, bytes);
  } catch (e) {
    throw undecodable(e);
  }
}

async function* encodeAll(messages: MessageRegistry, schema: DescMessage, items: AsyncIterable<unknown>): AsyncIterable<Uint8Array> {
  for await (const item of items) yield encodeMessage(messages, schema, item);
}

async function* decodeAll(messages: MessageRegistry, schema: DescMessage, items: AsyncIterable<Uint8Array>): AsyncIterable<MessageShape<DescMessage>> {
  for await (const item of items) yield decodeMessage(messages, schema, item);
}

/** A typed client for `service` over a ttrpc Client or another Transport. */
export function createClient<M extends GenServiceMethods>(
  service: GenService<M>,
  client: Transport,
  options: ServiceNameOptions,
): ServiceClient<M> {
  const name = options.serviceName ?? service.typeName;
  const { messages } = options;
  const out: Record<string, unknown> = {};
  for (const m of service.methods) {
    const { input, output } = m;
    switch (m.methodKind) {
      case "unary":
        out[m.localName] = async (req: unknown, o?: CallOptions) =>
          decodeMessage(messages, output, await client.call(name, m.name, encodeMessage(messages, input, req), o));
        break;
      case "server_streaming":
        out[m.localName] = (req: unknown, o?: CallOptions) =>
          decodeAll(messages, output, streaming(client, "serverStream")(name, m.name, encodeMessage(messages, input, req), o));
        break;
      case "client_streaming":
        out[m.localName] = async (reqs: AsyncIterable<unknown>, o?: CallOptions) =>
          decodeMessage(messages, output, await streaming(client, "clientStream")(name, m.name, encodeAll(messages, input, reqs), o));
        break;
      case "bidi_streaming":
        out[m.localName] = (reqs: AsyncIterable<unknown>, o?: CallOptions) =>
          decodeAll(messages, output, streaming(client, "bidiStream")(name, m.name, encodeAll(messages, input, reqs), o));
        break;
    }
  }
  return out as ServiceClient<M>;
}

/** Raw methods, keyed by wire method name, for the handlers `impl` provides. */
export function serviceMethods<M extends GenServiceMethods>(
  service: GenService<M>,
  impl: ServiceImpl<M>,
  options: Pick<ServiceNameOptions, "messages">,
): Record<string, RawMethod> {
  const { messages } = options;
  const out: Record<string, RawMethod> = {};
  const handlers = impl as Record<string, ((...args: never[]) => unknown) | undefined>;
  for (const m of service.methods) {
    const h = handlers[m.localName] as ((a: unknown, ctx: CallContext) => unknown) | undefined;
    if (h === undefined) continue;
    const { input, output } = m;
    switch (m.methodKind) {
      case "unary":
        out[m.name] = {
          kind: "unary",
          handler: async (req, ctx) => encodeMessage(messages, output, await h(decodeMessage(messages, input, req), ctx)),
        };
        break;
      case "server_streaming":
        out[m.name] = {
          kind: "server_streaming",
          handler: (req, ctx) => encodeAll(messages, output, h(decodeMessage(messages, input, req), ctx) as AsyncIterable<unknown>),
        };
        break;
      case "client_streaming":
        out[m.name] = {
          kind: "client_streaming",
          handler: async (reqs, ctx) => encodeMessage(messages, output, await h(decodeAll(messages, input, reqs), ctx)),
        };
        break;
      case "bidi_streaming":
        out[m.name] = {
          kind: "bidi_streaming",
          handler: (reqs, ctx) => encodeAll(messages, output, h(decodeAll(messages, input, reqs), ctx) as AsyncIterable<unknown>),
        };
        break;
    }
  }
  return out;
}

/** Registers typed handlers for `service` on a server. */
export function registerService<M extends GenServiceMethods>(
  server: Server,
  service: GenService<M>,
  impl: ServiceImpl<M>,
  options: ServiceNameOptions,
): Server {
  return server.register(options.serviceName ?? service.typeName, serviceMethods(service, impl, options));
}
