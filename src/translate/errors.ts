import { RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";

/**
 * A call or response that cannot be translated: a StateChange event with no dedicated call,
 * malformed top-level bytes, or a service of the wrong package. It is an RpcError with code
 * INVALID_ARGUMENT, so a handler that lets it escape answers INVALID_ARGUMENT with `rawMessage`
 * (`translate: ...`) as the status message.
 */
export class TranslateError extends RpcError {
  override name = "TranslateError";

  constructor(rawMessage: string, options?: { cause?: unknown }) {
    super(Code.INVALID_ARGUMENT, rawMessage, options);
  }
}
