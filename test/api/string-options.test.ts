import { describe, expect, it } from "vitest";
import { formatEvent, formatEventMask } from "../../src/index.js";
import { NriPlugin } from "../../src/plugin/index.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { runConformance } from "../../src/testing/index.js";
import { toV1alpha1 } from "../../src/translate/index.js";

/*
 * Every string option is checked where it enters: a value outside its type (a misspelling, an
 * old name) is a RangeError naming the option and what it takes, never another path taken quietly.
 */

describe("string options refuse unknown values where they enter", () => {
  const call = { service: "nri.pkg.api.v1beta1.Plugin", method: "RunPodSandbox", payload: new Uint8Array() };

  it("translate: event calls, with the old spelling state-change among them", () => {
    for (const v of ["state-change", "StateChange", ""]) {
      expect(() => toV1alpha1(call, v as never)).toThrow(new RangeError(`translate: event calls ${JSON.stringify(v)} is not "dedicated" or "statechange"`));
    }
    expect(() => toV1alpha1(call, undefined as never)).toThrow(new RangeError('translate: event calls undefined is not "dedicated" or "statechange"'));
    expect(toV1alpha1(call, "statechange").method).toBe("StateChange");
    expect(toV1alpha1(call, "dedicated").method).toBe("RunPodSandbox");
  });

  it("a plugin's dialect", () => {
    expect(() => new NriPlugin({}, { name: "p", idx: "10", dialect: "state-change" as never })).toThrow(
      new RangeError('nri: dialect "state-change" is not "v1beta1", "v1alpha1" or "statechange"'),
    );
    expect(new NriPlugin({}, { name: "p", idx: "10", dialect: "statechange" }).id).toBe("10-p");
  });

  it("the runtime's teardown contract", () => {
    expect(() => new NriRuntime({ name: "t", version: "0", socketPath: false, teardownErrors: "ignore" as never })).toThrow(
      new RangeError('nri: teardownErrors "ignore" is not "fail" or "continue"'),
    );
  });

  it("the conformance runner's dialects", async () => {
    const starter = { description: "never started", start: () => Promise.reject(new Error("not reached")) };
    await expect(runConformance({ starter: starter as never, dialects: ["v1beta1", "state-change" as never] })).rejects.toThrow(
      new RangeError('test-plugin: dialect "state-change" is not "v1beta1", "v1alpha1" or "statechange"'),
    );
  });

  it("an event name style", () => {
    expect(() => formatEvent(1, "Method" as never)).toThrow(new RangeError('nri: event name style "Method" is not "method" or "enum"'));
    expect(() => formatEventMask(0, "upper" as never)).toThrow(new RangeError('nri: event name style "upper" is not "method" or "enum"'));
    expect([formatEvent(1, "enum"), formatEvent(1, "method")]).toEqual(["RUN_POD_SANDBOX", "RunPodSandbox"]);
  });
});
