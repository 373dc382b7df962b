import { errorText } from "../internal/error-text.js";
/**
 * Malformed protobuf bytes. Raised by the reader with the bare `reason` and the byte `offset`
 * (relative to where reading started); a generated decoder re-raises it once with the message
 * type and field it was reading, so the text reads
 * `decode nri.pkg.api.v1alpha1.Container: field linux (11): length 12 exceeds remaining 3`.
 */
export class DecodeError extends Error {
  override name = "DecodeError";

  constructor(
    message: string,
    /** What is wrong, without context: `length 12 exceeds remaining 3`. */
    readonly reason: string,
    /** Byte offset of the element that is wrong, relative to the reader's start. */
    readonly offset: number,
    /** Full name of the message being decoded; undefined until a decoder names it. */
    readonly typeName?: string,
    /** Number of the field being read; undefined when the error is not inside a field. */
    readonly field?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * `e`, thrown while decoding field `field` (0 when between fields) of `typeName`, as the
 * DecodeError that names them. `names` lists the declared fields as `number:name,...`; it is
 * parsed only here, on the error path. An error that already names a message passes through, so
 * the innermost message is the one named; anything else (a bug, not bad input) is wrapped.
 */
export function decodeFailure(e: unknown, typeName: string, field: number, names: string): DecodeError {
  if (e instanceof DecodeError) {
    if (e.typeName !== undefined) return e;
    const no = e.field ?? field;
    return new DecodeError(`decode ${typeName}: ${describeField(no, names)}${e.reason}`, e.reason, e.offset, typeName, no || undefined);
  }
  const reason = errorText(e);
  return new DecodeError(`decode ${typeName}: ${describeField(field, names)}${reason}`, reason, -1, typeName, field || undefined, { cause: e });
}

function describeField(no: number, names: string): string {
  if (no === 0) return "";
  const key = `${no}:`;
  for (const entry of names.split(",")) {
    if (entry.startsWith(key)) return `field ${entry.slice(key.length)} (${no}): `;
  }
  return `field ${no}: `;
}
