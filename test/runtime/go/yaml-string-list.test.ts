import { describe, expect, it } from "vitest";
import { parseYamlStringList } from "../../../src/runtime/go/yaml-string-list.js";

function error(text: string): string {
  try {
    parseYamlStringList(text);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected an error");
}

describe("parseYamlStringList", () => {
  it("reads flow lists", () => {
    expect(parseYamlStringList("[a, b]")).toEqual(["a", "b"]);
    expect(parseYamlStringList(" [ 'it''s', \"q\\\"\\u00e9\", x y ,] # why")).toEqual(["it's", 'q"é', "x y"]);
    expect(parseYamlStringList("[a,\n  b]")).toEqual(["a", "b"]);
    expect(parseYamlStringList("[]")).toEqual([]);
    expect(parseYamlStringList("[1, 0x1f, true, ~, null]")).toEqual(["1", "0x1f", "true"]);
  });

  it("reads block lists", () => {
    expect(parseYamlStringList("- a\n- 'b'\n-\n- c # note\n")).toEqual(["a", "b", "c"]);
    expect(parseYamlStringList("  - a\n  - b")).toEqual(["a", "b"]);
  });

  it("reads empty and null documents as no list", () => {
    for (const t of ["", "  \n", "# only a comment", "~", "null", "NULL"]) expect(parseYamlStringList(t)).toBeUndefined();
  });

  it("refuses what is not a list of strings with yaml.v3's texts", () => {
    expect(error("x")).toBe("yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `x` into []string");
    expect(error("\n'quoted text'")).toBe("yaml: unmarshal errors:\n  line 2: cannot unmarshal !!str `quoted ...` into []string");
    expect(error("1.5")).toBe("yaml: unmarshal errors:\n  line 1: cannot unmarshal !!float `1.5` into []string");
    expect(error("a: b")).toBe("yaml: unmarshal errors:\n  line 1: cannot unmarshal !!map into []string");
    expect(error("[a, [b]]")).toBe("yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into string");
    expect(error("[a, {b: c}]")).toBe("yaml: unmarshal errors:\n  line 1: cannot unmarshal !!map into string");
    expect(error("[a, b")).toBe("yaml: line 1: did not find expected ',' or ']'");
    expect(error("[a,,b]")).toBe("yaml: did not find expected node content");
  });

  it("refuses YAML it does not read instead of guessing", () => {
    for (const t of ["- a\nb", "[a] x", "&x [a]", "- *x", "- a\n  - b"]) expect(error(t)).toBe("yaml: nri-wire reads only flat lists of scalars");
  });
});
