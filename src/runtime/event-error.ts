import { RpcError } from "../ttrpc/errors.js";
import type { Code } from "../ttrpc/status.js";
import { AdaptationError } from "./errors.js";

/**
 * An event failed because of a plugin: its message is the Go runtime's text for the same
 * failure, byte for byte (`plugin 10-slow failed to handle CreateContainer request: context
 * deadline exceeded`, `rpc error: code = Unknown desc = boom`, ...); `event` is the event's
 * method name and `plugin` the `NN-name` of the plugin at fault.
 */
export class EventError extends AdaptationError {
  override name = "EventError";

  constructor(
    message: string,
    readonly event: string,
    readonly plugin: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The status code the plugin answered with, when its answer is what failed the event. */
  get code(): Code | undefined {
    for (let c: unknown = this.cause; c instanceof Error; c = c.cause) if (c instanceof RpcError) return c.code;
    return undefined;
  }
}
