import { describe, expect, it } from "vitest";
import { importGraph } from "../support/import-graph.js";
import { refMethod } from "./reference.js";

describe("the reference translation", () => {
  it("reaches no module of src: the property tests compare two independent implementations", () => {
    const { files } = importGraph("test/translate/reference.ts");
    expect([...files].filter((f) => f.startsWith("src/"))).toEqual([]);
  });

  it("names an event's method from the descriptor's enum name", () => {
    expect([1, 13, 14].map(refMethod)).toEqual(["RunPodSandbox", "PostUpdatePodSandbox", "ValidateContainerAdjustment"]);
  });
});
