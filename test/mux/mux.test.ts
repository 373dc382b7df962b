import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MuxError } from "../../src/mux/errors.js";
import { MAX_WRITE_PAYLOAD, MUX_HEADER_LENGTH, MuxDecoder, encodeMuxFrames } from "../../src/mux/trunk-frame.js";
import { Mux } from "../../src/mux/mux.js";
import { Client } from "../../src/ttrpc/client.js";
import { FrameDecoder } from "../../src/ttrpc/frame.js";
import { decodeRequest } from "../../src/ttrpc/envelope.js";
import { Server } from "../../src/ttrpc/server.js";
import { concat, split } from "../support/bytes.js";
import { runs } from "../support/fc.js";
import { trunkPair } from "../support/socket.js";
import { eventually } from "../support/wait.js";


/** The payload sizes of every frame in an encoded trunk stream. */
function frameSizes(bytes: Uint8Array): number[] {
  const sizes: number[] = [];
  for (let o = 0; o < bytes.length; ) {
    const len = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).readUInt32BE(o + 4);
    sizes.push(len);
    o += MUX_HEADER_LENGTH + len;
  }
  return sizes;
}

describe("mux framing", () => {
  it("gives back each conn's bytes exactly for any interleaving and any chunking", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.uint8Array({ minLength: 1, maxLength: 700 })), { maxLength: 20 }),
        fc.integer({ min: 1, max: 600 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (writes, maxPayload, cuts) => {
          const trunk = concat(writes.map(([id, data]) => encodeMuxFrames(id, data, maxPayload)));
          for (const size of frameSizes(trunk)) expect(size).toBeLessThanOrEqual(maxPayload);
          const got = new Map<number, Uint8Array[]>();
          const decoder = new MuxDecoder();
          for (const chunk of split(trunk, cuts)) {
            for (const s of decoder.decode(chunk)) got.set(s.connId, [...(got.get(s.connId) ?? []), s.data]);
          }
          decoder.end();
          const want = new Map<number, Uint8Array[]>();
          for (const [id, data] of writes) want.set(id, [...(want.get(id) ?? []), data]);
          expect(new Map([...got].map(([k, v]) => [k, [...concat(v)]]))).toEqual(new Map([...want].map(([k, v]) => [k, [...concat(v)]])));
        },
      ),
    );
  });

  it("writes every frame with at most 4096 payload bytes by default", () => {
    const trunk = encodeMuxFrames(2, new Uint8Array(6072));
    expect(frameSizes(trunk)).toEqual([4096, 1976]);
    expect(MAX_WRITE_PAYLOAD).toBe(4096);
  });

  it("encodes into memory of its own, never a slice of Node's shared buffer pool", () => {
    const small = encodeMuxFrames(1, new Uint8Array(100));
    expect([small.byteOffset, small.buffer.byteLength, small.length]).toEqual([0, 108, 108]);
  });

  it("raises only MuxError on garbage, naming the frame", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 8 }), (chunks) => {
        const d = new MuxDecoder(64);
        try {
          for (const c of chunks) d.decode(c);
          d.end();
        } catch (e) {
          expect(e).toBeInstanceOf(MuxError);
        }
      }),
      { numRuns: runs(5) },
    );
    expect(() => new MuxDecoder(64).decode(Uint8Array.of(0, 0, 0, 1, 0, 0, 0, 65))).toThrow(
      new MuxError("mux: frame length 65 for conn 1 exceeds maximum 64"),
    );
    const d = new MuxDecoder();
    d.decode(Uint8Array.of(0, 0, 0, 2, 0, 0, 0, 9, 1, 2));
    expect(() => d.end()).toThrow(new MuxError("mux: truncated frame: trunk ended after 2 of 9 payload bytes for conn 2"));
  });

  it("reassembles the recorded reference session's ttrpc messages from its socket reads", () => {
    const dir = resolve(import.meta.dirname, "../fixtures/vectors");
    for (const session of ["new-runtime--new-plugin", "new-runtime--legacy-plugin"]) {
      const index = JSON.parse(readFileSync(join(dir, `${session}.index.json`), "utf8")) as { chunks: { dir: string; offset: number; length: number }[] };
      const frames = JSON.parse(readFileSync(join(dir, `${session}.frames.json`), "utf8")) as { messages: { dir: string; connId: number; bodyHex: string }[] };
      for (const dirName of ["p2r", "r2p"]) {
        const bytes = readFileSync(join(dir, `${session}.${dirName}.bin`));
        const mux = new MuxDecoder();
        const ttrpc = new Map([1, 2].map((id) => [id, new FrameDecoder()]));
        const bodies: [number, string][] = [];
        for (const c of index.chunks.filter((c) => c.dir === dirName)) {
          for (const seg of mux.decode(bytes.subarray(c.offset, c.offset + c.length))) {
            for (const f of ttrpc.get(seg.connId)!.decode(seg.data)) bodies.push([seg.connId, Buffer.from(f.data).toString("hex")]);
          }
        }
        mux.end();
        const want = frames.messages.filter((m) => m.dir === dirName).map((m): [number, string] => [m.connId, m.bodyHex]);
        const byConn = (list: [number, string][], id: number) => list.filter(([c]) => c === id).map(([, b]) => b);
        for (const id of [1, 2]) expect(byConn(bodies, id)).toEqual(byConn(want, id));
        expect(bodies.length).toBe(want.length);
      }
    }
  });
});


describe("mux over a socket", () => {
  it("carries ttrpc both ways on conns 1 and 2 at once", async () => {
    const [a, b, done] = await trunkPair();
    const ma = new Mux(a);
    const mb = new Mux(b);
    const echo = { Echo: { kind: "unary" as const, handler: (r: Uint8Array) => r } };
    new Server().register("s.One", echo).serve(ma.open(1));
    new Server().register("s.Two", echo).serve(mb.open(2));
    const c1 = new Client(mb.open(1));
    const c2 = new Client(ma.open(2));
    const big = new Uint8Array(100_000).map((_, i) => i & 0xff);
    const [r1, r2] = await Promise.all([c1.call("s.One", "Echo", big), c2.call("s.Two", "Echo", Uint8Array.of(7))]);
    expect(Buffer.compare(Buffer.from(r1), Buffer.from(big))).toBe(0);
    expect([...r2]).toEqual([7]);
    ma.close();
    const err = await mb.closed;
    expect(err.message).toBe("mux: trunk closed by peer");
    await expect(c1.call("s.One", "Echo", big)).rejects.toThrow("unavailable: connection closed: mux: trunk closed by peer");
    done();
  });

  it("end(): every byte written before it reaches the peer, then the trunk closes with its reason", async () => {
    const [a, b, done] = await trunkPair();
    const ma = new Mux(a);
    const mb = new Mux(b);
    const big = new Uint8Array(4 << 20).map((_, i) => i & 0xff);
    let got = 0;
    mb.open(1).on("data", (d: Buffer) => (got += d.length));
    const c1 = ma.open(1);
    c1.write(big);
    c1.write(Uint8Array.of(1, 2, 3));
    ma.open(2).write(Uint8Array.of(4));
    const reason = new Error("done here");
    expect(await ma.end(reason)).toBe(reason);
    expect((await mb.closed).message).toBe("mux: trunk closed by peer");
    expect(got).toBe(big.length + 3);
    expect(ma.closeReason).toBe(reason);
    done();
  });

  it("delivers the consecutive frames of one conn in a trunk read as one chunk, in order with the others", async () => {
    const trunk = new PassThrough();
    const m = new Mux(trunk);
    const chunks = new Map<number, number[][]>();
    for (const id of [1, 2]) m.open(id).on("data", (d: Buffer) => chunks.set(id, [...(chunks.get(id) ?? []), [...d]]));
    const bytes = (n: number, from: number): Uint8Array => new Uint8Array(n).map((_, i) => (from + i) & 0xff);
    // 6072 bytes on conn 1 (frames of 4096 + 1976), 3 on conn 2, then 2 frames on conn 1 again.
    trunk.write(concat([encodeMuxFrames(1, bytes(6072, 0)), encodeMuxFrames(2, bytes(3, 9)), encodeMuxFrames(1, bytes(5, 1), 3)]));
    await eventually(() => chunks.get(1)?.length === 2, "conn 1's two chunks");
    expect(chunks.get(1)!.map((c) => c.length)).toEqual([6072, 5]);
    expect([chunks.get(1)![0], chunks.get(1)![1], chunks.get(2)]).toEqual([[...bytes(6072, 0)], [1, 2, 3, 4, 5], [[9, 10, 11]]]);
    m.close();
  });

  it("refuses conn id 0, drops frames for conns not opened, and stops reading the trunk for an unread conn", async () => {
    const [a, b, done] = await trunkPair();
    const mb = new Mux(b, { connHighWaterMark: 1024 });
    expect(() => mb.open(0)).toThrow(new RangeError("mux: conn id 0 is reserved"));
    const c5 = mb.open(5);
    a.write(encodeMuxFrames(9, new Uint8Array(100)));
    for (let i = 0; i < 16; i++) a.write(encodeMuxFrames(5, new Uint8Array(64 << 10)));
    await eventually(() => b.isPaused(), "the trunk to pause");
    // conn 5 is not being read: it holds at most its high-water mark plus one socket read
    // (64 KiB) and the trunk is paused, so the rest of the megabyte waits in the kernel.
    expect(c5.readableLength).toBeLessThanOrEqual(1024 + (64 << 10));
    expect(b.isPaused()).toBe(true);
    let got = 0;
    c5.on("data", (d: Buffer) => (got += d.length));
    await eventually(() => got === 16 * (64 << 10), "conn 5 to receive the whole megabyte");
    expect(b.isPaused()).toBe(false);
    mb.close();
    a.destroy();
    done();
  });
});
