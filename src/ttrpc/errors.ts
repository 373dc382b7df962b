import { Code, codeName } from "./status.js";

/** One entry of google.rpc.Status.details: a google.protobuf.Any, kept as bytes. */
export interface StatusDetail {
  readonly typeUrl: string;
  readonly value: Uint8Array;
}

/** The parts of a google.rpc.Status, as carried in a ttrpc Response. */
export interface StatusFields {
  readonly code: number;
  readonly message: string;
  readonly details: readonly StatusDetail[];
}

/**
 * A call that failed with a status: the code, the peer's raw message and any details. Its
 * `message` is `<code name>: <raw message>`.
 */
export class RpcError extends Error {
  override name = "RpcError";
  readonly code: Code;
  readonly rawMessage: string;
  readonly details: readonly StatusDetail[];

  constructor(code: Code, rawMessage: string, options?: { details?: readonly StatusDetail[]; cause?: unknown }) {
    super(`${codeName(code)}: ${rawMessage}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.rawMessage = rawMessage;
    this.details = options?.details ?? [];
  }

  /** The status this error travels as. */
  toStatus(): StatusFields {
    return { code: this.code, message: this.rawMessage, details: this.details };
  }

  /** The error a non-OK status stands for. */
  static fromStatus(status: StatusFields): RpcError {
    return new RpcError(status.code, status.message, { details: status.details });
  }

  /**
   * Any thrown value as an RpcError: an RpcError keeps its code, anything else is UNKNOWN with
   * its message, as the reference server does for plain errors.
   */
  static from(value: unknown): RpcError {
    if (value instanceof RpcError) return value;
    if (value instanceof Error) return new RpcError(Code.UNKNOWN, value.message, { cause: value });
    return new RpcError(Code.UNKNOWN, String(value), { cause: value });
  }
}

/** Bytes that break the protocol: a malformed frame, envelope or stream sequence. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

export { ClosedError } from "../internal/errors.js";
