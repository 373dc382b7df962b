import { RpcError } from "../ttrpc/errors.js";

/**
 * How a call to a plugin failed, in the terms the failure policy needs. Only `deadline`,
 * `closed` and `protocol` are fatal: the plugin did not answer. `status` (the plugin answered
 * with an error), `decode` (its answer does not parse) and `canceled` (the runtime gave up on
 * the event) fail the event without touching the plugin.
 */
export type CallFailure = "status" | "decode" | "deadline" | "closed" | "protocol" | "canceled";

/** gRPC code names as Go's `codes.Code.String()` spells them, indexed by code. */
const GO_CODE_NAMES: readonly string[] = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
];

/** A gRPC code's name as Go's `codes.Code.String()` prints it: `Unknown`, or `Code(17)` past the table. */
export function goCodeName(code: number): string {
  return GO_CODE_NAMES[code] ?? `Code(${code})`;
}

/** A status error as a Go client prints it: `rpc error: code = Unknown desc = boom`. */
export function goStatusText(code: number, message: string): string {
  return `rpc error: code = ${goCodeName(code)} desc = ${message}`;
}

/** What Go says for each failure that has no message of its own. */
export const GO_DEADLINE_EXCEEDED = "context deadline exceeded";
export const GO_CANCELED = "context canceled";
export const GO_TTRPC_CLOSED = "ttrpc: closed";
export const GO_PROTO_DECODE = "proto: cannot parse invalid wire-format data";

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
