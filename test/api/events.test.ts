import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { fromBinary } from "@bufbuild/protobuf";
import { ALL_EVENTS, FIRST_EVENT, LAST_VALID_EVENT, VALID_EVENTS_MASK, checkMask, eventBit, eventsToMask, formatEvent, formatEventMask, isValidEvent, maskToEvents, parseEvent, parseEventMask } from "../../src/api/events.js";
import * as events from "../../src/api/events.js";
import * as index from "../../src/index.js";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import * as beta from "../../gen/v1beta1/api_pb.js";
import * as betaEntry from "../../src/v1beta1.js";

/**
 * Event numbers and subscription masks (PROTOCOL.md section 5): bit for event E is 1 << (E - 1),
 * events 1..14 are subscribable, UNKNOWN (0) and LAST (15) are bounds. Expected values come from
 * the spec, the wire contract and the recorded sessions, not from src/api/events.ts itself.
 */

/** The contract's Event enum (containerd/nri v0.12.2). */
const contractEvents: Record<string, number> = (
  JSON.parse(readFileSync(new URL("../fixtures/wire/nri-v1alpha1.wire.json", import.meta.url), "utf8")) as {
    files: { enums: Record<string, Record<string, number>> }[];
  }
).files[0]?.enums["Event"] ?? {};

/** Subscribable events by enum name, as the contract numbers them. */
const subscribable = Object.entries(contractEvents).filter(([name]) => name !== "UNKNOWN" && name !== "LAST");

/** The Plugin service's method names: every subscribable event has a dedicated method. */
const pluginMethods = new Set(alpha.Plugin.methods.map((m) => m.name));

/** Random upper/lower case per character. */
function recase(name: string): fc.Arbitrary<string> {
  return fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((ups) => [...name].map((c, i) => (ups[i] ? c.toUpperCase() : c.toLowerCase())).join(""));
}

const validMask = fc.integer({ min: 0, max: 16383 });
/** 32-bit masks with at least one bit outside the 14 valid ones, as signed or unsigned numbers. */
const invalidMask = fc
  .tuple(fc.integer({ min: 0, max: 16383 }), fc.integer({ min: 1, max: 0x3ffff }), fc.boolean())
  .map(([valid, extra, signed]) => {
    const m = (valid | (extra << 14)) >>> 0;
    return signed ? m | 0 : m;
  });

describe("constants", () => {
  it("the contract defines UNKNOWN = 0, 14 events and LAST = 15", () => {
    expect(contractEvents["UNKNOWN"]).toBe(0);
    expect(contractEvents["LAST"]).toBe(15);
    expect(subscribable.map(([, n]) => n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it("VALID_EVENTS_MASK is (1 << 14) - 1 = 16383", () => {
    expect(VALID_EVENTS_MASK).toBe(16383);
    expect(FIRST_EVENT).toBe(1);
    expect(LAST_VALID_EVENT).toBe(14);
    expect(ALL_EVENTS).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it("the Event enum of both revisions is the contract's", () => {
    for (const [name, n] of Object.entries(contractEvents)) {
      expect((alpha.Event as unknown as Record<string, number>)[name]).toBe(n);
      expect((beta.Event as unknown as Record<string, number>)[name]).toBe(n);
    }
  });

  it("the package entry re-exports the same helpers, and the Event of nri-wire/v1beta1", () => {
    expect(index.eventBit).toBe(eventBit);
    expect(index.parseEventMask).toBe(parseEventMask);
    expect(index.VALID_EVENTS_MASK).toBe(16383);
    expect(index.Event).toBe(betaEntry.Event);
    expect({ ...index.Event }).toStrictEqual({ ...beta.Event });
    // Every other name it exports is src/api/events.ts's own, not a copy.
    const { Event: _, ...helpers } = index;
    expect(Object.keys(helpers)).toContain("formatEvent");
    for (const [name, value] of Object.entries(helpers)) expect(value, name).toBe((events as Record<string, unknown>)[name]);
  });
});

describe("eventBit", () => {
  it.each(subscribable)("%s (%i) has bit 1 << (event - 1)", (_name, e) => {
    expect(eventBit(e)).toBe(2 ** (e - 1));
    expect(isValidEvent(e)).toBe(true);
  });

  it.each([
    [0, "nri: event UNKNOWN (0) is not a subscribable event"],
    [15, "nri: event LAST (15) is not a subscribable event"],
    [16, "nri: event 16 is not a subscribable event"],
    [-1, "nri: event -1 is not a subscribable event"],
    [1.5, "nri: event 1.5 is not a subscribable event"],
    [Number.NaN, "nri: event NaN is not a subscribable event"],
  ])("%s: RangeError %j", (e, message) => {
    expect(isValidEvent(e)).toBe(false);
    expect(() => eventBit(e)).toThrow(new RangeError(message));
    expect(() => eventBit(e)).toThrow(RangeError);
  });
});

describe("eventsToMask and maskToEvents", () => {
  it("events -> mask -> events gives the events sorted, without duplicates", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 14 }), { maxLength: 20 }), (events) => {
        const mask = eventsToMask(events);
        const expected = [...new Set(events)].sort((a, b) => a - b);
        expect(mask).toBe(expected.reduce((m, e) => m + 2 ** (e - 1), 0));
        expect(maskToEvents(mask)).toEqual(expected);
      }),
    );
  });

  it("mask -> events -> mask is the identity on valid masks", () => {
    fc.assert(
      fc.property(validMask, (mask) => {
        const events = maskToEvents(mask);
        for (const e of events) expect(mask & (2 ** (e - 1))).not.toBe(0);
        expect(events).toHaveLength(mask.toString(2).replace(/0/g, "").length);
        expect(eventsToMask(events)).toBe(mask);
      }),
    );
  });

  it("0 is no events and 16383 is all 14 (the runtime, not this helper, reads 0 as 'all')", () => {
    expect(maskToEvents(0)).toEqual([]);
    expect(eventsToMask([])).toBe(0);
    expect(maskToEvents(16383)).toEqual(ALL_EVENTS);
  });

  it("the recorded sessions: the v0.12.2 plugin subscribes 16383, the v0.6.1 plugin 2047 = events 1..11", () => {
    const masks: Record<string, number> = {};
    for (const session of ["new-runtime--new-plugin", "new-runtime--legacy-plugin"]) {
      const url = new URL(`../fixtures/vectors/${session}.frames.json`, import.meta.url);
      const frames = JSON.parse(readFileSync(url, "utf8")) as {
        messages: { payloadType?: string; payloadHex?: string }[];
      };
      const configure = frames.messages.find((m) => m.payloadType === "nri.pkg.api.v1alpha1.ConfigureResponse");
      const res = fromBinary(alpha.ConfigureResponseSchema, Buffer.from(configure?.payloadHex ?? "", "hex"));
      masks[session] = res.events;
    }
    expect(masks).toEqual({ "new-runtime--new-plugin": 16383, "new-runtime--legacy-plugin": 2047 });
    expect(maskToEvents(2047)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(formatEventMask(2047, "enum").split(",").at(-1)).toBe("REMOVE_CONTAINER");
  });

  it("an event outside 1..14 in the list is the eventBit error", () => {
    expect(() => eventsToMask([1, 0])).toThrow(new RangeError("nri: event UNKNOWN (0) is not a subscribable event"));
    expect(() => eventsToMask([15])).toThrow(new RangeError("nri: event LAST (15) is not a subscribable event"));
  });

  it("masks with bits outside the 14 valid ones are rejected, naming the mask and the extra bits", () => {
    fc.assert(
      fc.property(invalidMask, (mask) => {
        const unsigned = mask >>> 0;
        const extra = unsigned - (unsigned % 16384);
        const message = `nri: event mask 0x${unsigned.toString(16)} has unknown bits 0x${extra.toString(16)}`;
        expect(() => maskToEvents(mask)).toThrow(new RangeError(message));
        expect(() => checkMask(mask)).toThrow(new RangeError(message));
      }),
    );
  });

  it.each([
    [1 << 14, "nri: event mask 0x4000 has unknown bits 0x4000"],
    [-1, "nri: event mask 0xffffffff has unknown bits 0xffffc000"],
    [0x80000000, "nri: event mask 0x80000000 has unknown bits 0x80000000"],
  ])("checkMask(%i): %s", (mask, message) => {
    expect(() => checkMask(mask)).toThrow(new RangeError(message));
  });

  it.each([
    [1.5, "nri: event mask 1.5 is not a 32-bit integer"],
    [2 ** 32, "nri: event mask 4294967296 is not a 32-bit integer"],
    [-(2 ** 31) - 1, "nri: event mask -2147483649 is not a 32-bit integer"],
    [Number.NaN, "nri: event mask NaN is not a 32-bit integer"],
  ])("checkMask(%s): %s", (mask, message) => {
    expect(() => checkMask(mask)).toThrow(new RangeError(message));
    expect(() => maskToEvents(mask)).toThrow(new RangeError(message));
  });
});

describe("parseEvent and formatEvent", () => {
  it.each(subscribable)("%s (%i): method name is the Plugin method of the same event", (name, e) => {
    const method = formatEvent(e);
    expect(pluginMethods.has(method)).toBe(true);
    expect(method.toUpperCase()).toBe(name.replace(/_/g, ""));
    expect(formatEvent(e, "method")).toBe(method);
    expect(formatEvent(e, "enum")).toBe(name);
  });

  it("method names, exactly: the contract's enum names in PascalCase, in number order", () => {
    const pascal = (name: string): string => name.toLowerCase().replace(/(?:^|_)([a-z])/g, (_m, c: string) => c.toUpperCase());
    expect(ALL_EVENTS.map((e) => formatEvent(e))).toEqual(subscribable.map(([name]) => pascal(name)));
    expect(pascal("POST_UPDATE_POD_SANDBOX")).toBe("PostUpdatePodSandbox");
  });

  it.each(subscribable)("%s (%i): parsed from both styles in any case, and kebab-case", (name, e) => {
    const method = formatEvent(e);
    const kebab = name.toLowerCase().replace(/_/g, "-");
    fc.assert(
      fc.property(fc.oneof(recase(name), recase(method), recase(kebab)), (spelled) => {
        expect(parseEvent(spelled)).toBe(e);
      }),
      { numRuns: 20 },
    );
    expect(parseEvent(name)).toBe(e);
    expect(parseEvent(method)).toBe(e);
    expect(parseEvent(name.toLowerCase())).toBe(e);
    expect(parseEvent(method.toLowerCase())).toBe(e);
  });

  it.each(["UNKNOWN", "unknown", "Unknown", "LAST", "last", "Last"])(
    "%s is a bound, not an event: RangeError",
    (name) => {
      expect(() => parseEvent(name)).toThrow(new RangeError(`nri: event name "${name}" is a bound, not a subscribable event`));
    },
  );

  it.each(["", "Bogus", "RunPod", "RunPodSandboxes", "1", "StateChange", "all"])(
    "%j is unknown: RangeError with the name as given",
    (name) => {
      expect(() => parseEvent(name)).toThrow(new RangeError(`nri: unknown event name "${name}"`));
    },
  );

  it.each([
    [0, "nri: event UNKNOWN (0) is not a subscribable event"],
    [15, "nri: event LAST (15) is not a subscribable event"],
    [99, "nri: event 99 is not a subscribable event"],
  ])("formatEvent(%i): RangeError %j", (e, message) => {
    expect(() => formatEvent(e)).toThrow(new RangeError(message));
    expect(() => formatEvent(e, "enum")).toThrow(new RangeError(message));
  });
});

describe("parseEventMask and formatEventMask", () => {
  it.each([
    ["all", 16383],
    ["ALL", 16383],
    [" all ", 16383],
    ["RunPodSandbox,all", 16383],
    ["all,all", 16383],
    ["", 0],
    [" , ,", 0],
    ["RunPodSandbox", 1],
    ["RunPodSandbox,stop_pod_sandbox", 3],
    ["RUN_POD_SANDBOX, RunPodSandbox ,run-pod-sandbox", 1],
    ["ValidateContainerAdjustment", 8192],
    ["run_pod_sandbox,,remove_container", 1 + 1024],
  ])("%j is %i", (spec, mask) => {
    expect(parseEventMask(spec)).toBe(mask);
  });

  it.each([
    ["RunPodSandbox,Bogus", 'nri: unknown event name "Bogus"'],
    ["RunPodSandbox, Bogus ", 'nri: unknown event name "Bogus"'],
    ["unknown", 'nri: event name "unknown" is a bound, not a subscribable event'],
    ["all,LAST", 'nri: event name "LAST" is a bound, not a subscribable event'],
    ["al l", 'nri: unknown event name "al l"'],
  ])("%j: RangeError %j", (spec, message) => {
    expect(() => parseEventMask(spec)).toThrow(new RangeError(message));
  });

  it("formatEventMask lists the events in numeric order; parseEventMask reads it back, both styles", () => {
    fc.assert(
      fc.property(validMask, fc.constantFrom("enum" as const, "method" as const), (mask, style) => {
        const text = formatEventMask(mask, style);
        expect(parseEventMask(text)).toBe(mask);
        expect(text === "" ? [] : text.split(",").map((n) => parseEvent(n))).toEqual(maskToEvents(mask));
      }),
    );
  });

  it("formats, exactly", () => {
    expect(formatEventMask(0)).toBe("");
    expect(formatEventMask(1 | 4 | 8192)).toBe("RunPodSandbox,RemovePodSandbox,ValidateContainerAdjustment");
    expect(formatEventMask(1 | 4 | 8192, "enum")).toBe("RUN_POD_SANDBOX,REMOVE_POD_SANDBOX,VALIDATE_CONTAINER_ADJUSTMENT");
    expect(() => formatEventMask(1 << 14)).toThrow(new RangeError("nri: event mask 0x4000 has unknown bits 0x4000"));
  });
});
