/** The integer kinds of the protocol, with the range each one holds. */
export type IntegerKind = "int32" | "uint32" | "int64" | "uint64";

/** A 64-bit protocol integer as a plugin may give it: a bigint, or a number that is a safe integer. */
export type Int64Like = bigint | number;

const RANGES: Readonly<Record<IntegerKind, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/**
 * `value` checked against the range of `kind`; `field` names it in the error
 * (`nri: linux.resources.cpu.shares: -1 is out of range for uint64 (0 to 18446744073709551615)`).
 * Numbers must be safe integers: a larger one has already lost its low digits, so it is refused.
 */
export function checkInteger(value: Int64Like, kind: IntegerKind, field: string): bigint {
  let big: bigint;
  if (typeof value === "bigint") big = value;
  else if (typeof value !== "number") throw new TypeError(`nri: ${field}: ${String(value)} is not a number`);
  else if (!Number.isInteger(value)) throw new RangeError(`nri: ${field}: ${value} is not an integer`);
  else if (!Number.isSafeInteger(value)) throw new RangeError(`nri: ${field}: ${value} is beyond 2^53 and has lost precision: give it as a bigint`);
  else big = BigInt(value);
  const [min, max] = RANGES[kind];
  if (big < min || big > max) throw new RangeError(`nri: ${field}: ${big} is out of range for ${kind} (${min} to ${max})`);
  return big;
}

/** An int64 field's value as the bigint the generated types hold, range-checked. */
export function int64(value: Int64Like, field: string): bigint {
  return checkInteger(value, "int64", field);
}

/** A uint64 field's value as the bigint the generated types hold, range-checked. */
export function uint64(value: Int64Like, field: string): bigint {
  return checkInteger(value, "uint64", field);
}

/** A 32-bit field's value as the number the generated types hold, range-checked. */
export function int32(value: Int64Like, field: string, kind: "int32" | "uint32" = "int32"): number {
  return Number(checkInteger(value, kind, field));
}
