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
}
