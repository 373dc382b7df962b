/**
 * nri-wire/ttrpc: the ttrpc protocol. A sans-IO frame codec, a client and a server over any
 * Node Duplex, typed clients and services from protoc-gen-es descriptors, and the status and
 * protocol errors.
 */
export { Client, type CallOptions, type ClientOptions } from "./client.js";
export type { ClientCall, ClientInterceptor, MethodKind, ServerCall, ServerInterceptor } from "./interceptors.js";
export type { Interceptor } from "../internal/interceptor.js";
export { type ConnectionOptions, FrameConnection } from "./connection.js";
export {
  type KeyValue,
  type RequestEnvelope,
  type ResponseEnvelope,
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
} from "./envelope.js";
export { ClosedError, ProtocolError, RpcError, type StatusDetail, type StatusFields } from "./errors.js";
export { DEFAULT_PARTIAL_FRAME_LIMIT, FrameBudget, processFrameBudget } from "./budget.js";
export {
  DEFAULT_MAX_DATA_LENGTH,
  Flag,
  Frame,
  FrameDecoder,
  type FrameDecoderOptions,
  HEADER_LENGTH,
  MessageType,
  encodeFrame,
} from "./frame.js";
export { type ListenUnixOptions, listenUnix } from "../internal/listen.js";
export { type MetadataInit, groupMetadata, toKeyValues } from "./metadata.js";
export {
  type BidiStreamingHandler,
  type CallContext,
  type ClientStreamingHandler,
  type RawMethod,
  Server,
  ServerConnection,
  type ServerOptions,
  type ServerStreamingHandler,
  type UnaryHandler,
} from "./server.js";
export { Code, codeName } from "./status.js";
export {
  type ServiceClient,
  type ServiceImpl,
  type ServiceNameOptions,
  type Transport,
  createClient,
  registerService,
  serviceMethods,
} from "./typed.js";
