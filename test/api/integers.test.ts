import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkInteger, int32, int64, uint64 } from "../../src/api/integers.js";
import "../support/fc.js";

describe("range-checked protocol integers", () => {
  it("takes every safe integer and every bigint in range, as the same value", () => {
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => int64(n, "f") === BigInt(n)));
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (n) => uint64(n, "f") === n));
    fc.assert(fc.property(fc.integer(), (n) => int32(n, "f") === n));
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => int32(n, "f", "uint32") === n));
  });

  it("refuses what is out of range, fractional, or past 2^53, naming the field", () => {
    expect(() => uint64(-1, "linux.resources.cpu.shares")).toThrow("nri: linux.resources.cpu.shares: -1 is out of range for uint64 (0 to 18446744073709551615)");
    expect(() => int64(2n ** 63n, "x")).toThrow("nri: x: 9223372036854775808 is out of range for int64 (-9223372036854775808 to 9223372036854775807)");
    expect(() => int32(2 ** 31, "nice")).toThrow("nri: nice: 2147483648 is out of range for int32 (-2147483648 to 2147483647)");
    expect(() => int64(1.5, "linux.resources.memory.limit")).toThrow("nri: linux.resources.memory.limit: 1.5 is not an integer");
    expect(() => int64(2 ** 60, "limit")).toThrow("nri: limit: 1152921504606847000 is beyond 2^53 and has lost precision: give it as a bigint");
    expect(() => int64(Number.NaN, "limit")).toThrow("nri: limit: NaN is not an integer");
    expect(() => checkInteger("7" as never, "int64", "limit")).toThrow("nri: limit: 7 is not a number");
  });
});
