import { RpcError } from "../ttrpc/errors.js";

/**
 * A call to the peer that failed with a status, with who and what in front of its message
 * (`nri: plugin 10-a: UpdateContainers: unknown: broken`). It is the RpcError it wraps in all but
 * the message: same code, raw message and details, so callers can still test `code`.
 */
export class NriCallError extends RpcError {
  override name = "NriCallError";

  constructor(context: string, err: RpcError) {
    super(err.code, err.rawMessage, { details: err.details, cause: err });
    this.message = `${context}: ${err.message}`;
  }
}

/** `err` with `context` in front: an NriCallError for an RpcError, a plain Error otherwise. */
export function callError(context: string, err: unknown): Error {
  if (err instanceof RpcError) return new NriCallError(context, err);
  return new Error(`${context}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
