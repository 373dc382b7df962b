import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { decodeResponse, encodeRequest } from "../../src/ttrpc/envelope.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { Flag, FrameDecoder, MessageType, encodeFrame } from "../../src/ttrpc/frame.js";
import { Server } from "../../src/ttrpc/server.js";
import { eventually } from "../support/wait.js";
import { expectRejection } from "../support/errors.js";
import { Code, Harness, dec, enc, testServer, useHarness } from "./harness.js";

const rejection = (p: Promise<unknown>): Promise<RpcError> => expectRejection(RpcError, p);

/** Sends raw frames on a fresh socket and returns the first `n` response frames' statuses. */
async function rawExchange(h: Harness, frames: Uint8Array[], n: number) {
  const s = await h.socket();
  const decoder = new FrameDecoder();
  const got: { streamId: number; code: number; message: string; payload: string }[] = [];
  const done = new Promise<void>((resolve) => {
    s.on("data", (chunk: Buffer) => {
      for (const f of decoder.decode(chunk)) {
        const r = decodeResponse(f.data);
        got.push({ streamId: f.streamId, code: r.status?.code ?? 0, message: r.status?.message ?? "", payload: dec(r.payload) });
        if (got.length === n) resolve();
      }
    });
  });
  for (const f of frames) s.write(f);
  await done;
  s.destroy();
  return got;
}

const request = (id: number, method: string, payload: string, flags = 0) =>
  encodeFrame(id, MessageType.Request, flags, encodeRequest({ service: "t.Test", method, payload: enc(payload), timeoutNano: 0, metadata: [] }));

describe("ttrpc client and server", () => {
  const h = useHarness();

  it("answers unknown services and methods UNIMPLEMENTED with the reference's messages", async () => {
    const c = await h.client();
    const e1 = await rejection(c.call("t.Nope", "Echo", enc("")));
    expect([e1.code, e1.rawMessage, e1.message]).toEqual([Code.UNIMPLEMENTED, "service t.Nope", "unimplemented: service t.Nope"]);
    const e2 = await rejection(c.call("t.Test", "Nope", enc("")));
    expect([e2.code, e2.rawMessage]).toEqual([Code.UNIMPLEMENTED, "method Nope"]);
    c.close();
  });

  it("keeps a thrown status code and sends any other error as UNKNOWN with its message", async () => {
    const c = await h.client();
    const e1 = await rejection(c.call("t.Test", "Fail", enc("5")));
    expect([e1.code, e1.rawMessage]).toEqual([Code.NOT_FOUND, "wanted failure"]);
    const e2 = await rejection(c.call("t.Test", "Fail", enc("-1")));
    expect([e2.code, e2.rawMessage]).toEqual([Code.UNKNOWN, "plain failure"]);
    c.close();
  });

  it("enforces deadlines on both sides and drops the late response harmlessly", async () => {
    const c = await h.client();
    const e = await rejection(c.call("t.Test", "Sleep", enc("100"), { timeoutMs: 20 }));
    expect([e.code, e.message]).toEqual([Code.DEADLINE_EXCEEDED, "deadline_exceeded: deadline of 20 ms exceeded"]);
    // The server finishes the call and answers; the client drops that late answer.
    await eventually(() => h.connections.every((x) => x.active === 0), "the server to finish the timed-out call");
    expect(dec(await c.call("t.Test", "Echo", enc("still fine")))).toBe("still fine");
    // Server side: timeout_nano alone (no local timer on the raw socket) ends the call.
    const [r] = await rawExchange(h, [encodeFrame(1, 1, 0, encodeRequest({ service: "t.Test", method: "Sleep", payload: enc("5000"), timeoutNano: 30e6, metadata: [] }))], 1);
    expect(r).toEqual({ streamId: 1, code: Code.DEADLINE_EXCEEDED, message: "deadline of 30 ms exceeded", payload: "" });
    c.close();
  });

  it("handles deadlines longer than a Node timer can hold (2^31 ms) on both sides", async () => {
    const c = await h.client();
    expect(dec(await c.call("t.Test", "Sleep", enc("30"), { timeoutMs: 2 ** 31 + 5 }))).toBe("30");
    const [r] = await rawExchange(h, [encodeFrame(1, 1, 0, encodeRequest({ service: "t.Test", method: "Sleep", payload: enc("30"), timeoutNano: 2592000000000000, metadata: [] }))], 1);
    expect(r).toEqual({ streamId: 1, code: 0, message: "", payload: "30" });
    c.close();
  });

  it("ignores a bare close frame on a stream that takes no client input, and a repeated one", async () => {
    const got = await rawExchange(
      h,
      [
        request(1, "Sleep", "20"),
        encodeFrame(1, MessageType.Data, Flag.RemoteClosed | Flag.NoData),
        request(3, "Sum", "", Flag.RemoteOpen),
        encodeFrame(3, MessageType.Data, 0, enc("4")),
        encodeFrame(3, MessageType.Data, Flag.RemoteClosed | Flag.NoData),
        encodeFrame(3, MessageType.Data, Flag.RemoteClosed | Flag.NoData),
      ],
      2,
    );
    expect(got.sort((a, b) => a.streamId - b.streamId)).toEqual([
      { streamId: 1, code: 0, message: "", payload: "20" },
      { streamId: 3, code: 0, message: "", payload: "4" },
    ]);
  });

  it("keeps large messages flowing both ways at once (no mutual backpressure deadlock)", async () => {
    const c = await h.client();
    const big = new Uint8Array(1 << 20).fill(3);
    const results = await Promise.all(Array.from({ length: 8 }, () => c.call("t.Test", "Echo", big, { timeoutMs: 20_000 })));
    expect(results.map((r) => r.length)).toEqual(Array(8).fill(1 << 20));
    c.close();
  });

  it("cancels with an AbortSignal", async () => {
    const c = await h.client();
    const ac = new AbortController();
    const p = c.call("t.Test", "Sleep", enc("1000"), { signal: ac.signal });
    ac.abort(new Error("user gave up"));
    const e = await rejection(p);
    expect([e.code, e.message]).toEqual([Code.CANCELED, "canceled: call canceled: user gave up"]);
    expect(c.pending).toBe(0);
    c.close();
  });

  it("refuses to send a request over the limit and keeps the connection", async () => {
    const c = await h.client({ maxDataLength: 100 });
    const e = await rejection(c.call("t.Test", "Echo", new Uint8Array(100)));
    expect([e.code, e.rawMessage]).toEqual([Code.RESOURCE_EXHAUSTED, "message length 116 exceed maximum message size of 100"]);
    expect(dec(await c.call("t.Test", "Echo", enc("ok")))).toBe("ok");
    c.close();
  });

  it("answers an oversized frame RESOURCE_EXHAUSTED for its stream and keeps serving", async () => {
    const big = new Uint8Array(10 + (4 << 20) + 1);
    big.set(encodeFrame(1, 1, 0).subarray(0, 10));
    new DataView(big.buffer).setUint32(0, (4 << 20) + 1);
    const got = await rawExchange(h, [big, request(3, "Echo", "after")], 2);
    expect(got).toEqual([
      { streamId: 1, code: Code.RESOURCE_EXHAUSTED, message: "message length 4194305 exceed maximum message size of 4194304", payload: "" },
      { streamId: 3, code: 0, message: "", payload: "after" },
    ]);
  });

  it("rejects even and reused stream ids, bad bodies and data on a unary stream; ignores unknown types", async () => {
    const got = await rawExchange(
      h,
      [
        request(2, "Echo", "even"),
        encodeFrame(5, 0x7f, 0, enc("junk")),
        request(5, "Echo", "five"),
        request(3, "Echo", "reused"),
        encodeFrame(7, MessageType.Request, 0, Uint8Array.of(0x0a, 0x09)),
        request(9, "Sleep", "200"),
        encodeFrame(9, MessageType.Data, 0, enc("x")),
        encodeFrame(11, MessageType.Data, 0, enc("x")),
      ],
      6,
    );
    expect(got).toEqual([
      { streamId: 2, code: Code.INVALID_ARGUMENT, message: "StreamID must be odd for client initiated streams", payload: "" },
      { streamId: 5, code: 0, message: "", payload: "five" },
      { streamId: 3, code: Code.INVALID_ARGUMENT, message: "StreamID cannot be re-used and must increment", payload: "" },
      { streamId: 7, code: Code.INVALID_ARGUMENT, message: "unmarshal request error: ttrpc: invalid request: length 9 exceeds remaining 0 at offset 1", payload: "" },
      { streamId: 9, code: Code.INVALID_ARGUMENT, message: "data frame on stream 9 of a method that takes no client stream", payload: "" },
      { streamId: 11, code: Code.INVALID_ARGUMENT, message: "StreamID is no longer active", payload: "" },
    ]);
  });

  it("ends a server stream with an empty remote-closed data frame, as the reference does", async () => {
    const s = await h.socket();
    const decoder = new FrameDecoder();
    const frames: [number, number, string][] = [];
    s.write(request(1, "Count", "2", Flag.RemoteClosed));
    while (frames.length < 3) {
      const [chunk] = (await once(s, "data")) as [Buffer];
      for (const f of decoder.decode(chunk)) frames.push([f.type, f.flags, dec(f.data)]);
    }
    expect(frames).toEqual([
      [MessageType.Data, 0, "0"],
      [MessageType.Data, 0, "1"],
      [MessageType.Data, Flag.RemoteClosed | Flag.NoData, ""],
    ]);
    s.destroy();
  });

  it("never sends a response over the limit: answers RESOURCE_EXHAUSTED instead", async () => {
    const small = new Harness(testServer({ maxDataLength: 64 }));
    await small.start();
    const c = await small.client({ maxDataLength: 1 << 20 });
    const e = await rejection(c.call("t.Test", "Grow", enc("100")));
    expect([e.code, e.rawMessage]).toEqual([Code.RESOURCE_EXHAUSTED, "message length 102 exceed maximum message size of 64"]);
    expect((await c.call("t.Test", "Grow", enc("60"))).length).toBe(60);
    small.close();
  });

  it("graceful shutdown lets calls in flight finish and refuses new ones", async () => {
    const g = new Harness();
    await g.start();
    const c = await g.client();
    const slow = c.call("t.Test", "Sleep", enc("100"));
    await eventually(() => g.connections[0]?.active === 1, "the call to reach the server");
    const down = g.server.shutdown(5000);
    expect(dec(await slow)).toBe("100");
    await down;
    const e = await rejection(c.call("t.Test", "Echo", enc("late")));
    expect(e.code).toBe(Code.UNAVAILABLE);
  });

  it("abrupt close settles every pending call on both sides", async () => {
    const a = new Harness();
    await a.start();
    const c = await a.client();
    const aborted: unknown[] = [];
    const server = a.server as Server;
    server.register("t.Hang", {
      Forever: {
        kind: "unary",
        handler: (_r, ctx) =>
          new Promise((_, reject) =>
            ctx.signal.addEventListener("abort", () => {
              aborted.push(ctx.signal.reason);
              reject(ctx.signal.reason);
            }),
          ),
      },
    });
    const calls = [c.call("t.Hang", "Forever", enc("")), c.call("t.Hang", "Forever", enc(""))];
    await eventually(() => a.connections[0]?.active === 2, "both calls to reach the server");
    server.close();
    for (const p of calls) {
      const e = await rejection(p);
      expect(e.code).toBe(Code.UNAVAILABLE);
      expect(e.message).toMatch(/^unavailable: connection closed: /);
    }
    expect(aborted).toHaveLength(2);
    expect((aborted[0] as RpcError).message).toBe("canceled: connection closed: ttrpc: server closed");
    expect(c.pending).toBe(0);
  });
});
