import { RpcError } from "../ttrpc/errors.js";
import type { Code } from "../ttrpc/status.js";
import { goStatusText } from "./go/status-text.js";

/*
 * The runtime side's errors. docs/architecture.md has the table of every error class of the
 * package and when each is raised.
 */

/**
 * An error of the runtime's adaptation whose `message` is byte for byte the text containerd/nri's
 * Go runtime (v0.12.5 `pkg/adaptation`) returns for the same situation: ownership conflicts,
 * updates asked during creation, validator rejections. Callers compare or relay the text as is.
 */
export class AdaptationError extends Error {
  override name = "AdaptationError";
}

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

/**
 * How a call to a plugin failed, in the terms the failure policy needs. Only `deadline`,
 * `closed` and `protocol` are fatal: the plugin did not answer. `status` (the plugin answered
 * with an error), `decode` (its answer does not parse) and `canceled` (the runtime gave up on
 * the event) fail the event without touching the plugin.
 */
export type CallFailure = "status" | "decode" | "deadline" | "closed" | "protocol" | "canceled";

/**
 * One failed call to a plugin. Its message is the text the Go runtime has for the same failure,
 * so errors built on it read byte for byte as containerd's do.
 */
export class PluginCallError extends Error {
  override name = "PluginCallError";

  constructor(
    message: string,
    readonly failure: CallFailure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Whether the plugin failed to answer at all (Go's isFatalError). */
  get fatal(): boolean {
    return this.failure === "deadline" || this.failure === "closed" || this.failure === "protocol";
  }

  /** The error for an RpcError a plugin answered with. */
  static fromStatus(e: RpcError): PluginCallError {
    return new PluginCallError(goStatusText(e.code, e.rawMessage), "status", { cause: e });
  }
}

/** A plugin's answer status, or any other rejection, as a PluginCallError. */
export function toCallError(e: unknown): PluginCallError {
  if (e instanceof PluginCallError) return e;
  if (e instanceof RpcError) return PluginCallError.fromStatus(e);
  if (e instanceof Error) return new PluginCallError(e.message, "status", { cause: e });
  return new PluginCallError(String(e), "status", { cause: e });
}

/** An answer that arrived but cannot be read as the v1beta1 answer (its translation failed). */
export class AnswerError extends Error {
  override readonly name = "AnswerError";
  constructor(
    method: string,
    override readonly cause: Error,
  ) {
    super(`${method}: ${cause.message}`, { cause });
  }
}

/** A YAML text the Go reader would refuse; `message` is its text. */
export class YamlError extends Error {
  override name = "YamlError";
}
