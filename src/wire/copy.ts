import type { UnknownField } from "@bufbuild/protobuf";
import type { Int64 } from "./writer.js";

/*
 * What the clone_X functions protoc-gen-nri-wire generates call for values that are not copied
 * by plain assignment. 64-bit values come out as protobuf-es clone() leaves them: a field holding
 * a number or a decimal string (which encoders accept) is normalised to the field's own
 * representation, a bigint, or a string under jstype = JS_STRING.
 */

/** A 64-bit value as a bigint: numbers and decimal strings are converted, as clone() does. */
export function toBigint64(v: Int64): bigint {
  return typeof v === "bigint" ? v : BigInt(v);
}

/** A 64-bit value of a jstype = JS_STRING field as a decimal string, as clone() leaves it. */
export function toString64(v: Int64): string {
  return typeof v === "string" ? v : String(v);
}

/**
 * A copy of a message's unknown fields. protobuf-es clone() copies the list and shares its
 * entries (and their bytes, often a view of a decoded buffer); here the clone owns them too, so
 * that nothing it holds changes with the original or with that buffer.
 */
export function copyUnknown(u: readonly UnknownField[]): UnknownField[] {
  const out: UnknownField[] = [];
  for (let i = 0; i < u.length; i++) {
    const f = u[i]!;
    out.push({ no: f.no, wireType: f.wireType, data: new Uint8Array(f.data) });
  }
  return out;
}
