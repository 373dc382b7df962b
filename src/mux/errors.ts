/** Bytes on the trunk that break the mux framing; fatal to the trunk and every connection on it. */
export class MuxError extends Error {
  override name = "MuxError";
}
