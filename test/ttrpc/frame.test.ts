import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrameBudget } from "../../src/ttrpc/budget.js";
import { ProtocolError } from "../../src/ttrpc/errors.js";
import { Frame, FrameDecoder, HEADER_LENGTH, encodeFrame } from "../../src/ttrpc/frame.js";
import { concat, split } from "../support/bytes.js";
import { runs } from "../support/fc.js";

interface Spec {
  streamId: number;
  type: number;
  flags: number;
  data: Uint8Array;
}

const specArb: fc.Arbitrary<Spec> = fc.record({
  streamId: fc.nat({ max: 0xffffffff }),
  type: fc.integer({ min: 0, max: 255 }),
  flags: fc.integer({ min: 0, max: 255 }),
  data: fc.uint8Array({ maxLength: 600 }),
});


function decodeAll(decoder: FrameDecoder, chunks: readonly Uint8Array[]): Frame[] {
  const frames: Frame[] = [];
  for (const c of chunks) frames.push(...decoder.decode(c));
  return frames;
}

const plain = (f: Frame) => {
  // The range and the view made from it must agree, and the view must be one (never a copy).
  expect(f.data.length).toBe(f.length);
  expect(f.data.buffer).toBe(f.bytes.buffer);
  expect(f.data.byteOffset).toBe(f.bytes.byteOffset + f.offset);
  return { streamId: f.streamId, type: f.type, flags: f.flags, data: [...f.data], oversize: f.oversize };
};
const plainSpec = (s: Spec) => ({ streamId: s.streamId, type: s.type, flags: s.flags, data: [...s.data], oversize: 0 });

describe("frame codec", () => {
  it("round-trips any frames whatever the chunking, down to 1-byte chunks", () => {
    fc.assert(
      fc.property(fc.array(specArb, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 40 }), fc.boolean(), (specs, cuts, bytewise) => {
        const bytes = concat(specs.map((s) => encodeFrame(s.streamId, s.type, s.flags, s.data)));
        const chunks = bytewise ? Array.from(bytes, (b) => Uint8Array.of(b)) : split(bytes, cuts);
        const decoder = new FrameDecoder();
        expect(decodeAll(decoder, chunks).map(plain)).toEqual(specs.map(plainSpec));
        expect(decoder.idle).toBe(true);
        decoder.end();
      }),
    );
  });

  it("hands out frames inside one chunk as views and copies only straddling frames", () => {
    const a = encodeFrame(1, 1, 0, Uint8Array.of(1, 2, 3));
    const b = encodeFrame(3, 1, 0, Uint8Array.of(4, 5, 6, 7));
    const chunk = concat([a, b]);
    const decoder = new FrameDecoder();
    const [fa, fb] = decoder.decode(chunk.subarray(0, a.length + 12));
    expect(fb).toBeUndefined();
    expect(fa!.data.buffer).toBe(chunk.buffer);
    expect(fa!.data.byteOffset).toBe(HEADER_LENGTH);
    const [late] = decoder.decode(chunk.subarray(a.length + 12));
    expect([...late!.data]).toEqual([4, 5, 6, 7]);
    expect(late!.data.buffer).not.toBe(chunk.buffer);
  });

  it("reports an oversized frame for its stream, skips its bytes unbuffered and keeps decoding", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(specArb.map((s) => ({ ...s, big: false })), specArb.map((s) => ({ ...s, big: true }))), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.integer({ min: 0, max: 64 }),
        (specs, cuts, max) => {
          // "big" frames carry max + 1 .. max + 600 bytes of data against a limit of `max`.
          const sized = specs.map((s) => (s.big ? { ...s, data: new Uint8Array(max + 1 + s.data.length) } : { ...s, data: s.data.subarray(0, max) }));
          const bytes = concat(sized.map((s) => encodeFrame(s.streamId, s.type, s.flags, s.data)));
          const decoder = new FrameDecoder({ maxDataLength: max });
          const got = decodeAll(decoder, split(bytes, cuts)).map(plain);
          expect(got).toEqual(
            sized.map((s) => (s.big ? { ...plainSpec(s), data: [], oversize: s.data.length } : plainSpec(s))),
          );
          expect(decoder.idle).toBe(true);
        },
      ),
    );
  });

  it("checks the announced length before buffering: a 4 GiB header allocates nothing", () => {
    // A budget of 0 refuses any byte: buffering the frame, or any part of it, would throw.
    const budget = new FrameBudget(0);
    const decoder = new FrameDecoder({ budget });
    const header = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7, 1, 0);
    const input = concat([header, new Uint8Array(1 << 20)]);
    const frames = decoder.decode(input);
    expect(frames.map(plain)).toEqual([{ streamId: 7, type: 1, flags: 0, data: [], oversize: 0xffffffff }]);
    expect([decoder.buffered, budget.used, decoder.idle]).toEqual([0, 0, false]);
    expect(() => decoder.end()).toThrow(
      new ProtocolError("ttrpc: truncated frame: input ended with 4293918719 bytes of an oversized frame of stream 7 unread"),
    );
  });

  it("demultiplexes interleaved streams back into each stream's messages", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 10 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 200 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (streams, order, cuts) => {
          const cursors = streams.map(() => 0);
          const frames: Uint8Array[] = [];
          let pick = 0;
          while (cursors.some((c, i) => c < streams[i]!.length)) {
            const live = cursors.flatMap((c, i) => (c < streams[i]!.length ? [i] : []));
            const i = live[(order[pick++ % Math.max(1, order.length)] ?? 0) % live.length]!;
            frames.push(encodeFrame(2 * i + 1, 3, 0, streams[i]![cursors[i]!++]!));
          }
          const got = new Map<number, number[][]>();
          for (const f of decodeAll(new FrameDecoder(), split(concat(frames), cuts))) {
            const list = got.get(f.streamId) ?? [];
            list.push([...f.data]);
            got.set(f.streamId, list);
          }
          streams.forEach((msgs, i) => expect(got.get(2 * i + 1) ?? []).toEqual(msgs.map((m) => [...m])));
        },
      ),
    );
  });

  it("never throws on random bytes while decoding, accounts for every byte, and end() raises only ProtocolError", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 10 }), fc.integer({ min: 0, max: 200 }), (chunks, max) => {
        const decoder = new FrameDecoder({ maxDataLength: max });
        let consumed = 0;
        for (const c of chunks) {
          for (const f of decoder.decode(c)) consumed += HEADER_LENGTH + (f.oversize || f.data.length);
        }
        const total = chunks.reduce((n, c) => n + c.length, 0);
        if (decoder.idle) {
          expect(consumed).toBe(total);
          decoder.end();
        } else {
          expect(() => decoder.end()).toThrow(ProtocolError);
        }
      }),
      { numRuns: runs(3) },
    );
  });

  it("names what was cut short at end of input", () => {
    const d1 = new FrameDecoder();
    d1.decode(Uint8Array.of(0, 0, 0, 5));
    expect(() => d1.end()).toThrow("ttrpc: truncated frame: input ended after 4 of 10 header bytes");
    const d2 = new FrameDecoder();
    d2.decode(encodeFrame(9, 2, 0, new Uint8Array(50)).subarray(0, 30));
    expect(() => d2.end()).toThrow("ttrpc: truncated frame: input ended after 20 of 50 data bytes of stream 9");
  });

  it("validates the limit option", () => {
    expect(() => new FrameDecoder({ maxDataLength: -1 })).toThrow("ttrpc: maxDataLength -1 is not an integer from 0 to 4294967295");
  });
});
