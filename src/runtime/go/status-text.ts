/*
 * The texts Go's runtime prints for failed calls: gRPC code names as `codes.Code.String()` spells
 * them, a status as a Go client prints it, and the messages of failures that have none of their own.
 */

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
