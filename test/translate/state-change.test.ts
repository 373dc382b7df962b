import { equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescMessage } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import { TranslateError, fromStateChange, toStateChange } from "../../src/translate/index.js";
import type { Event } from "../../gen/v1beta1/api_pb.js";
import {
  type WireField,
  arbitraryMessage,
  arbitraryUnknownFields,
  encodeWireFields,
} from "../arbitraries/message.js";
import { runs } from "../support/fc.js";
import { NINE, POD_ONLY, betaRequestSchema, refFromStateChange, refMethod, refToStateChange } from "./reference.js";
import { hex } from "../support/bytes.js";


/** An event's request: arbitrary message of its v1beta1 dedicated request schema, encoded. */
const dedicatedArb: fc.Arbitrary<{ event: number; bytes: Uint8Array }> = fc.oneof(
  ...NINE.map((event) => {
    const schema = betaRequestSchema(event);
    return arbitraryMessage(schema).map((m) => ({ event, bytes: toBinary(schema, m) }));
  }),
);

const stateChangeArb = arbitraryMessage(alpha.StateChangeEventSchema);

function noDedicatedCall(event: number): string {
  const name = (alpha.Event as unknown as Record<number, string | undefined>)[event];
  return `translate: StateChange event ${name === undefined ? event : `${event} (${name})`} has no dedicated call`;
}

describe("dedicated request -> StateChange", () => {
  it("agrees byte for byte with the generated types for every generated request of the nine events", () => {
    fc.assert(
      fc.property(dedicatedArb, ({ event, bytes }) => {
        expect(hex(toStateChange(event as Event, bytes))).toBe(hex(refToStateChange(event, bytes)));
      }),
      { numRuns: runs(5) },
    );
  });

  it("there and back is the identity on canonical requests", () => {
    fc.assert(
      fc.property(dedicatedArb, ({ event, bytes }) => {
        const back = fromStateChange(toStateChange(event as Event, bytes));
        expect(back.event).toBe(event);
        expect(back.method).toBe(refMethod(event));
        expect(hex(back.payload)).toBe(hex(bytes));
      }),
      { numRuns: runs(5) },
    );
  });
});

describe("StateChange -> dedicated request", () => {
  it("agrees byte for byte with the generated types for every generated StateChangeEvent", () => {
    fc.assert(
      fc.property(stateChangeArb, (sc) => {
        const bytes = toBinary(alpha.StateChangeEventSchema, sc);
        if (!NINE.includes(sc.event)) {
          expect(() => fromStateChange(bytes)).toThrow(new TranslateError(noDedicatedCall(sc.event)));
          return;
        }
        const ours = fromStateChange(bytes);
        const ref = refFromStateChange(bytes);
        expect(ours.event).toBe(ref.event);
        expect(ours.method).toBe(ref.method);
        expect(hex(ours.payload)).toBe(hex(ref.payload));
      }),
      { numRuns: runs(5) },
    );
  });

  it("agrees with the generated types for each of the nine events, and there and back is the identity", () => {
    const arb = fc.tuple(fc.constantFrom(...NINE), stateChangeArb).map(([event, sc]) => {
      sc.event = event;
      // Canonical form: pod events carry no container.
      if (POD_ONLY.includes(event)) sc.container = undefined;
      return { event, bytes: toBinary(alpha.StateChangeEventSchema, sc) };
    });
    fc.assert(
      fc.property(arb, ({ event, bytes }) => {
        const ours = fromStateChange(bytes);
        expect(ours.event).toBe(event);
        expect(hex(ours.payload)).toBe(hex(refFromStateChange(bytes).payload));
        expect(hex(toStateChange(ours.event, ours.payload))).toBe(hex(bytes));
      }),
      { numRuns: runs(5) },
    );
  });
});

// Non-canonical input, built field by field so the expected bytes can be written down exactly.

const podArb = arbitraryMessage(alpha.PodSandboxSchema, { maxDepth: 2 }).map((m) => toBinary(alpha.PodSandboxSchema, m));
const containerArb = arbitraryMessage(alpha.ContainerSchema, { maxDepth: 2 }).map((m) => toBinary(alpha.ContainerSchema, m));

function lengthDelimited(no: number, value: Uint8Array): WireField {
  return { no, wireType: WireType.LengthDelimited, data: new BinaryWriter().bytes(value).finish() };
}

function eventField(event: number): WireField {
  return { no: 1, wireType: WireType.Varint, data: new BinaryWriter().int32(event).finish() };
}

/** One top-level field (the data includes the length prefix), written with a one-byte tag `tag`. */
function rewritten(tag: number, f: WireField): Uint8Array {
  return Buffer.concat([Uint8Array.of(tag), f.data]);
}

function decodeEqual(schema: DescMessage, a: Uint8Array, b: Uint8Array): boolean {
  return equals(schema, fromBinary(schema, a), fromBinary(schema, b));
}

type Part = { kind: "pod" | "container" | "unknown" | "event"; field: WireField };

function partsArb(unknownOf: DescMessage, podNo: number, containerNo: number, withEvents: boolean): fc.Arbitrary<Part[]> {
  const kinds: fc.Arbitrary<Part[]>[] = [
    podArb.map((v) => [{ kind: "pod", field: lengthDelimited(podNo, v) }]),
    containerArb.map((v) => [{ kind: "container", field: lengthDelimited(containerNo, v) }]),
    arbitraryUnknownFields(unknownOf, 2).map((u) => u.fields.map((field) => ({ kind: "unknown", field }))),
  ];
  if (withEvents) {
    kinds.push(
      fc
        .oneof({ arbitrary: fc.constantFrom(...NINE), weight: 4 }, { arbitrary: fc.integer({ min: -0x80000000, max: 0x7fffffff }), weight: 1 })
        .map((e) => [{ kind: "event", field: eventField(e) }]),
    );
  }
  return fc.array(fc.oneof(...kinds), { maxLength: 6 }).map((groups) => groups.flat());
}

describe("non-canonical input", () => {
  it("dedicated -> StateChange keeps every pod and container occurrence in order and drops undeclared fields", () => {
    const arb = fc.constantFrom(...NINE).chain((event) =>
      partsArb(betaRequestSchema(event), 1, 2, false).map((parts) => ({ event, parts })),
    );
    fc.assert(
      fc.property(arb, ({ event, parts }) => {
        const input = encodeWireFields(parts.map((p) => p.field));
        const podOnly = POD_ONLY.includes(event);
        // In a pod request, field 2 is undeclared: dropped like any unknown field.
        const expected = Buffer.concat([
          Uint8Array.of(0x08, event),
          ...parts.flatMap((p) =>
            p.kind === "pod" ? [rewritten(0x12, p.field)] : p.kind === "container" && !podOnly ? [rewritten(0x1a, p.field)] : [],
          ),
        ]);
        const ours = toStateChange(event as Event, input);
        expect(hex(ours)).toBe(hex(expected));
        // Protobuf merges repeated occurrences: the result means what the reference builds.
        expect(decodeEqual(alpha.StateChangeEventSchema, ours, refToStateChange(event, input))).toBe(true);
      }),
      { numRuns: runs(3) },
    );
  });

  it("StateChange -> dedicated: last event wins, occurrences kept in order, pod events drop the container, undeclared fields dropped", () => {
    const arb = partsArb(alpha.StateChangeEventSchema, 2, 3, true);
    fc.assert(
      fc.property(arb, (parts) => {
        const input = encodeWireFields(parts.map((p) => p.field));
        const last = parts.filter((p) => p.kind === "event").at(-1);
        const event = last === undefined ? 0 : fromBinary(alpha.StateChangeEventSchema, encodeWireFields([last.field])).event;
        if (!NINE.includes(event)) {
          expect(() => fromStateChange(input)).toThrow(new TranslateError(noDedicatedCall(event)));
          return;
        }
        const podOnly = POD_ONLY.includes(event);
        const expected = Buffer.concat(
          parts.flatMap((p) =>
            p.kind === "pod" ? [rewritten(0x0a, p.field)] : p.kind === "container" && !podOnly ? [rewritten(0x12, p.field)] : [],
          ),
        );
        const ours = fromStateChange(input);
        expect(ours.event).toBe(event);
        expect(ours.method).toBe(refMethod(event));
        expect(hex(ours.payload)).toBe(hex(expected));
        const ref = refFromStateChange(input);
        expect(decodeEqual(betaRequestSchema(event), ours.payload, ref.payload)).toBe(true);
      }),
      { numRuns: runs(3) },
    );
  });

  it("a pod event's container is dropped", () => {
    const pod = Uint8Array.of(0x0a, 0x01, 0x70); // PodSandbox{id: "p"}
    const container = Uint8Array.of(0x0a, 0x01, 0x63); // Container{id: "c"}
    for (const event of POD_ONLY) {
      const input = Uint8Array.of(0x08, event, 0x12, 3, ...pod, 0x1a, 3, ...container);
      const out = fromStateChange(input);
      expect(out.method).toBe(refMethod(event));
      expect(hex(out.payload)).toBe(hex(Uint8Array.of(0x0a, 3, ...pod)));
    }
    // A container event keeps it.
    const input = Uint8Array.of(0x08, 6, 0x1a, 3, ...container, 0x12, 3, ...pod);
    expect(hex(fromStateChange(input).payload)).toBe(hex(Uint8Array.of(0x12, 3, ...container, 0x0a, 3, ...pod)));
  });

  it("a StateChange with no event field is event 0", () => {
    expect(() => fromStateChange(Uint8Array.of(0x12, 0x00))).toThrow(
      new TranslateError("translate: StateChange event 0 (UNKNOWN) has no dedicated call"),
    );
  });

  it("an event given twice: the last one counts, as in protobuf", () => {
    expect(fromStateChange(Uint8Array.of(0x08, 4, 0x12, 0x00, 0x08, 13)).method).toBe("PostUpdatePodSandbox");
    expect(() => fromStateChange(Uint8Array.of(0x08, 13, 0x08, 4))).toThrow(
      new TranslateError("translate: StateChange event 4 (CREATE_CONTAINER) has no dedicated call"),
    );
  });

  it("reads an event as protobuf reads an int32 enum: non-minimal and 10-byte varints", () => {
    expect(fromStateChange(Uint8Array.of(0x08, 0x81, 0x80, 0x00)).event).toBe(1);
    // 2^32 + 5: the low 32 bits are 5.
    expect(fromStateChange(Uint8Array.of(0x08, 0x85, 0x80, 0x80, 0x80, 0x10)).event).toBe(5);
    // A non-minimal tag is still field 2.
    expect(hex(fromStateChange(Uint8Array.of(0x08, 1, 0x92, 0x00, 0x00)).payload)).toBe("0a00");
  });

  it("skips groups at the top level without decoding them", () => {
    // field 4 group { field 5 group {} field 1 = 1 } then event 1
    const input = Uint8Array.of(0x23, 0x2b, 0x2c, 0x08, 0x01, 0x24, 0x08, 0x01);
    expect(fromStateChange(input).method).toBe("RunPodSandbox");
  });

  it("in a pod request, field 2 is undeclared and dropped whatever its wire type", () => {
    expect(hex(toStateChange(1 as Event, Uint8Array.of(0x10, 0x07, 0x0a, 0x00)))).toBe("08011200");
  });
});

describe("malformed bytes", () => {
  const isTranslateError = (e: unknown): boolean => e instanceof TranslateError && e.code === 3;

  it("random bytes only ever raise TranslateError, both directions", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.constantFrom(...NINE), (bytes, event) => {
        for (const f of [() => fromStateChange(bytes), () => toStateChange(event as Event, bytes)]) {
          try {
            f();
          } catch (e) {
            expect(isTranslateError(e)).toBe(true);
          }
        }
      }),
      { numRuns: runs(20) },
    );
  });

  it("every truncation of a valid message either translates or raises TranslateError", () => {
    fc.assert(
      fc.property(dedicatedArb, ({ event, bytes }) => {
        const sc = toStateChange(event as Event, bytes);
        for (let n = 0; n < sc.length; n++) {
          try {
            fromStateChange(sc.subarray(0, n));
          } catch (e) {
            expect(isTranslateError(e)).toBe(true);
          }
          try {
            toStateChange(event as Event, bytes.subarray(0, Math.min(n, bytes.length)));
          } catch (e) {
            expect(isTranslateError(e)).toBe(true);
          }
        }
      }),
      { numRuns: runs(0.3) },
    );
  });
});
