import { describe, expect, it } from "vitest";
import { Field } from "../../gen/v1beta1/api_pb.js";
import { AdaptationError } from "../../src/runtime/errors.js";
import { goQuote } from "../../src/internal/go-quote.js";
import { OwnershipClaims } from "../../src/runtime/ownership-claims.js";
import { keyedFieldOwner, keyedFieldOwners, fieldOwner } from "../../src/api/owners.js";
import { expectThrown } from "../support/errors.js";

const thrown = (f: () => void): string => expectThrown(AdaptationError, f).message;

describe("OwnershipClaims", () => {
  it("a single-valued field conflicts with the Go text, trailing space included", () => {
    const o = new OwnershipClaims();
    o.claim("c", Field.MemLimit, "10-a");
    expect(thrown(() => o.claim("c", Field.MemLimit, "20-b"))).toBe('plugins "20-b" and "10-a" both tried to set MemLimit ');
    expect(fieldOwner(o.message, "c", Field.MemLimit)).toBe("10-a");
  });

  it("a keyed field conflicts per key and names the key", () => {
    const o = new OwnershipClaims();
    o.claimKey("c", Field.Annotations, "k", "10-a");
    o.claimKey("c", Field.Annotations, "other", "20-b");
    expect(thrown(() => o.claimKey("c", Field.Annotations, "k", "20-b"))).toBe('plugins "20-b" and "10-a" both tried to set Annotations k');
    expect(keyedFieldOwners(o.message, "c", Field.Annotations)).toEqual({ k: "10-a", other: "20-b" });
  });

  it("a plugin conflicts with itself when it claims twice", () => {
    const o = new OwnershipClaims();
    o.claimKey("c", Field.Env, "SELF", "20-b");
    expect(thrown(() => o.claimKey("c", Field.Env, "SELF", "20-b"))).toBe('plugins "20-b" and "20-b" both tried to set Env SELF');
  });

  it("owners are per container id", () => {
    const o = new OwnershipClaims();
    o.claim("c1", Field.CPUShares, "10-a");
    o.claim("c2", Field.CPUShares, "20-b");
    expect(Object.keys(o.message.owners).sort()).toEqual(["c1", "c2"]);
  });

  it("a removal marker lets its clearer set again and makes anyone else conflict with the clearer", () => {
    const o = new OwnershipClaims();
    o.claim("c", Field.Args, "10-a");
    o.clear("c", Field.Args, "20-b");
    expect(fieldOwner(o.message, "c", Field.Args)).toBe("-20-b");
    expect(thrown(() => o.claim("c", Field.Args, "30-c"))).toBe('plugins "30-c" and "20-b" both tried to set Args ');
    o.claim("c", Field.Args, "20-b");
    expect(fieldOwner(o.message, "c", Field.Args)).toBe("20-b");

    o.clearKey("c", Field.Mounts, "/m", "10-a");
    expect(keyedFieldOwner(o.message, "c", Field.Mounts, "/m")).toBe("-10-a");
    expect(thrown(() => o.claimKey("c", Field.Mounts, "/m", "20-b"))).toBe('plugins "20-b" and "10-a" both tried to set Mounts /m');
    o.claimKey("c", Field.Mounts, "/m", "10-a");
  });

  it("hooks accumulate their contributors and never conflict", () => {
    const o = new OwnershipClaims();
    o.accumulateHooks("c", "10-a");
    o.accumulateHooks("c", "20-b");
    o.accumulateHooks("c", "10-a");
    expect(fieldOwner(o.message, "c", Field.OciHooks)).toBe("10-a,20-b,10-a");
  });

  it("clearing RDT marks its three fields", () => {
    const o = new OwnershipClaims();
    o.clearRdt("c", "10-a");
    expect(o.message.owners.c!.simple).toEqual({ [Field.RdtClosID]: "-10-a", [Field.RdtSchemata]: "-10-a", [Field.RdtEnableMonitoring]: "-10-a" });
  });

  it("keys that shadow Object.prototype are ordinary keys", () => {
    const o = new OwnershipClaims();
    for (const k of ["constructor", "__proto__", "toString"]) {
      o.claimKey(k, Field.Sysctl, k, "10-a");
      expect(thrown(() => o.claimKey(k, Field.Sysctl, k, "20-b"))).toBe(`plugins "20-b" and "10-a" both tried to set Sysctl ${k}`);
    }
    expect(Object.keys(o.message.owners).sort()).toEqual(["__proto__", "constructor", "toString"]);
  });
});

describe("goQuote", () => {
  it("matches strconv.Quote", () => {
    expect(goQuote("10-a")).toBe('"10-a"');
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote("\x07\b\f\n\r\t\v\x00\x1b\x7f")).toBe('"\\a\\b\\f\\n\\r\\t\\v\\x00\\x1b\\x7f"');
    expect(goQuote("é日本\u00a0\u00ad😀\u{e0001}")).toBe('"é日本\\u00a0\\u00ad😀\\U000e0001"');
    expect(goQuote("\ud800")).toBe('"\ufffd"');
  });
});
