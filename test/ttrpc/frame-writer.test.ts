import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { FrameWriter } from "../../src/ttrpc/frame-writer.js";
import { HEADER_LENGTH, MessageType } from "../../src/ttrpc/frame.js";

/** A sink that records each write as the stream ids of the frames in it. */
function recordingSink(): { sink: Writable; writes: number[][] } {
  const writes: number[][] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      const ids: number[] = [];
      for (let p = 0; p < chunk.length; ) {
        const length = chunk.readUInt32BE(p);
        ids.push(chunk.readUInt32BE(p + 4));
        p += HEADER_LENGTH + length;
      }
      writes.push(ids);
      cb();
    },
  });
  return { sink, writes };
}

function frame(w: FrameWriter, id: number): void {
  const payload = new Uint8Array([id]);
  w.end(w.beginWithPayload(id, MessageType.Request, 0, 0, payload), payload);
}

describe("FrameWriter", () => {
  it("writes the first frame of a burst at once, and what else one callback and its promise continuations queue as one write", async () => {
    const { sink, writes } = recordingSink();
    const w = new FrameWriter(sink);
    // A callback of the event loop's own (a socket's data event in practice), not a promise's.
    setImmediate(() => {
      frame(w, 1);
      void Promise.resolve().then(() => frame(w, 3));
      void Promise.resolve()
        .then(() => undefined)
        .then(() => frame(w, 5));
      frame(w, 7);
    });
    await nextTurn();
    await nextTurn();
    expect(writes).toEqual([[1], [7, 3, 5]]);
  });

  it("writes a lone frame at once, and reports each write", async () => {
    const { sink, writes } = recordingSink();
    let reported = 0;
    const w = new FrameWriter(sink, () => reported++);
    const seen: number[][][] = [];
    frame(w, 1);
    seen.push(writes.map((ids) => [...ids]));
    await nextTurn();
    expect(seen).toEqual([[[1]]]);
    frame(w, 3);
    await nextTurn();
    expect([writes, reported]).toEqual([[[1], [3]], 2]);
  });

  it("starts its staging buffer over at the front once the sink has called back for every write", async () => {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk);
        cb();
      },
    });
    const w = new FrameWriter(sink);
    frame(w, 1);
    await nextTurn();
    frame(w, 3);
    await nextTurn();
    const [a, b] = chunks;
    expect([b!.buffer === a!.buffer, b!.byteOffset - a!.byteOffset, b!.readUInt32BE(4)]).toEqual([true, 0, 3]);
  });

  it("never writes over what a sink has not called back for", async () => {
    const chunks: Buffer[] = [];
    const held: (() => void)[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk);
        held.push(cb);
      },
    });
    const w = new FrameWriter(sink);
    frame(w, 1);
    await nextTurn();
    const first = Buffer.from(chunks[0]!);
    // The sink still holds the first write (no callback yet); it queues the second.
    frame(w, 3);
    await nextTurn();
    expect(Buffer.compare(chunks[0]!, first)).toBe(0);
    held.splice(0).forEach((cb) => cb());
    await nextTurn();
    held.splice(0).forEach((cb) => cb());
    await nextTurn();
    frame(w, 5);
    await nextTurn();
    const [a, b, c] = chunks;
    expect([b!.readUInt32BE(4), b!.buffer === a!.buffer && b!.byteOffset > a!.byteOffset, c!.buffer === a!.buffer && c!.byteOffset === a!.byteOffset, c!.readUInt32BE(4)]).toEqual([3, true, true, 5]);
  });

  it("drops what waits for the burst's end, and writes nothing more, once closed", async () => {
    const { sink, writes } = recordingSink();
    const w = new FrameWriter(sink);
    frame(w, 1);
    frame(w, 3);
    w.close();
    frame(w, 5);
    await nextTurn();
    expect(writes).toEqual([[1]]);
  });
});
