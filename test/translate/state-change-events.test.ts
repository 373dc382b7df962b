import { describe, expect, it } from "vitest";
import { ALL_EVENTS, formatEvent } from "../../src/api/events.js";
import {
  describeEvent,
  eventMethods,
  isStateChangeEvent,
  methodEvents,
  podEvents,
  stateChangeEventOf,
  stateChangeEvents,
  stateChangePluginMethods,
} from "../../src/translate/index.js";
import { NINE, POD_ONLY } from "./reference.js";

describe("StateChange event tables", () => {
  it("holds exactly the nine events of PROTOCOL.md §2, in numeric order", () => {
    expect([...stateChangeEvents]).toEqual(NINE);
    expect([...podEvents].sort((a, b) => a - b)).toEqual(POD_ONLY);
    for (const e of [-1, 0, 4, 8, 10, 12, 14, 15, 16, 1.5]) expect(isStateChangeEvent(e)).toBe(false);
    for (const e of NINE) expect(isStateChangeEvent(e)).toBe(true);
  });

  it("maps each event to the method named after it, and back", () => {
    for (const e of NINE) {
      expect(eventMethods.get(e)).toBe(formatEvent(e));
      expect(stateChangeEventOf(formatEvent(e))).toBe(e);
    }
    expect([...methodEvents.keys()]).toEqual(NINE.map((e) => formatEvent(e)));
    for (const e of ALL_EVENTS.filter((x) => !NINE.includes(x))) expect(stateChangeEventOf(formatEvent(e))).toBeUndefined();
    expect(stateChangeEventOf("StateChange")).toBeUndefined();
    expect(stateChangeEventOf("Configure")).toBeUndefined();
  });

  it("a StateChange plugin serves every v1alpha1 Plugin method but the nine events, StateChange included", () => {
    expect(stateChangePluginMethods).toEqual(["Configure", "Synchronize", "Shutdown", "UpdatePodSandbox", "CreateContainer", "UpdateContainer", "StopContainer", "StateChange", "ValidateContainerAdjustment"]);
    for (const e of NINE) expect(stateChangePluginMethods).not.toContain(formatEvent(e));
  });

  it("describes events for messages", () => {
    expect(describeEvent(13)).toBe("13 (POST_UPDATE_POD_SANDBOX)");
    expect(describeEvent(0)).toBe("0 (UNKNOWN)");
    expect(describeEvent(15)).toBe("15 (LAST)");
    expect(describeEvent(99)).toBe("99");
    expect(describeEvent(-1)).toBe("-1");
  });
});
