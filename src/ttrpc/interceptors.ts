import type { Interceptor } from "../internal/interceptor.js";
import type { KeyValue } from "./envelope.js";
import type { CallContext } from "./server.js";

/** The four shapes of a ttrpc method, as protobuf names them. */
export type MethodKind = "unary" | "server_streaming" | "client_streaming" | "bidi_streaming";

/** A call as a client's interceptors see it, before its request is sent. */
export interface ClientCall {
  readonly kind: MethodKind;
  readonly service: string;
  readonly method: string;
  /** The request: a unary or server-streaming call's message; empty when the client streams its messages. */
  readonly payload: Uint8Array;
  /** The metadata to send, in order; an interceptor may add, change or remove entries. */
  readonly metadata: KeyValue[];
  /** The call's timeout (sent as timeout_nano and enforced locally), undefined for none. */
  readonly timeoutMs: number | undefined;
  /** Cancels the call locally. */
  readonly signal: AbortSignal | undefined;
}

/**
 * Wraps every call a Client makes. `next` resolves with the answer: a unary or client-streaming
 * call's response; for a stream the server writes, an empty array once that stream has ended
 * (its messages reach the reader outside the chain). What the chain resolves with is the call's
 * answer (for a server stream, a last message when not empty); what it rejects with, its error.
 */
export type ClientInterceptor = Interceptor<ClientCall, Uint8Array>;

/** A call as a server's interceptors see it: the handler's context and the request. */
export interface ServerCall extends CallContext {
  readonly kind: MethodKind;
  /** The request: a unary or server-streaming call's message; empty when the client streams its messages. */
  readonly payload: Uint8Array;
}

/**
 * Wraps every call a Server serves, around its handler. `next` resolves with the handler's
 * answer: a unary or client-streaming call's response; for a stream the server writes, an empty
 * array once the handler's stream has been sent. What the chain resolves with is answered (for a
 * server stream, sent as a last message when not empty); what it rejects with is the status.
 */
export type ServerInterceptor = Interceptor<ServerCall, Uint8Array>;
