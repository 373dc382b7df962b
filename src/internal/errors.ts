/**
 * A connection that ended without a protocol fault: closed locally, by the peer between frames,
 * or reset by it. Calls still pending when it ends fail with RpcError UNAVAILABLE caused by it.
 */
export class ClosedError extends Error {
  override name = "ClosedError";
}
