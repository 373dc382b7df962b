import { connect, createServer } from "node:net";
import { Duplex } from "node:stream";
import { setImmediate as tick } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { Client } from "../../src/ttrpc/client.js";
import { ClosedError, ProtocolError, RpcError } from "../../src/ttrpc/errors.js";
import { MessageType, encodeFrame } from "../../src/ttrpc/frame.js";
import { eventually } from "../support/wait.js";
import { expectRejection } from "../support/errors.js";
import { Code, enc, useHarness } from "./harness.js";

const rejection = (p: Promise<unknown>): Promise<RpcError> => expectRejection(RpcError, p);

/** A Duplex whose inbound bytes the test pushes by hand; what the client writes is dropped. */
class HandFed extends Duplex {
  override _read(): void {}
  override _write(_chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    cb();
  }
}

describe("connection ends", () => {
  const h = useHarness();

  it("an orderly close is a ClosedError, never a ProtocolError, and pending calls fail UNAVAILABLE with it", async () => {
    const c = await h.client();
    const pending = c.call("t.Test", "Sleep", enc("60000"));
    // The server ends the connection between frames: the client hears the peer close it.
    await eventually(() => h.connections.at(-1)?.active === 1, "the call to reach the server");
    h.connections.at(-1)!.close();
    const reason = await c.closed;
    expect(reason).toBeInstanceOf(ClosedError);
    expect(reason).not.toBeInstanceOf(ProtocolError);
    expect([reason.name, reason.message]).toEqual(["ClosedError", "ttrpc: connection closed by peer"]);
    const e = await rejection(pending);
    expect([e.code, e.message, e.cause]).toEqual([Code.UNAVAILABLE, "unavailable: connection closed: ttrpc: connection closed by peer", reason]);

    const mine = await h.client();
    const waiting = mine.call("t.Test", "Sleep", enc("60000"));
    mine.close();
    expect(await mine.closed).toEqual(new ClosedError("ttrpc: connection closed"));
    const e2 = await rejection(waiting);
    expect([e2.code, e2.message]).toEqual([Code.UNAVAILABLE, "unavailable: connection closed: ttrpc: connection closed"]);
    const e3 = await rejection(mine.call("t.Test", "Echo", enc("x")));
    expect([e3.code, e3.message]).toEqual([Code.UNAVAILABLE, "unavailable: connection closed: ttrpc: connection closed"]);
  });

  it("a peer that stops in the middle of a frame is still a ProtocolError", async () => {
    const srv = createServer((s) => s.end(encodeFrame(1, MessageType.Response, 0, enc("abcdef")).subarray(0, 13)));
    const path = `${h.path}.cut`;
    await new Promise<void>((resolve) => srv.listen(path, resolve));
    const c = new Client(connect(path));
    const e = await rejection(c.call("t.Test", "Echo", enc("x")));
    const reason = await c.closed;
    expect(reason).toBeInstanceOf(ProtocolError);
    expect(reason.message).toBe("ttrpc: truncated frame: input ended after 3 of 6 data bytes of stream 1");
    expect([e.code, e.message]).toEqual([Code.UNAVAILABLE, "unavailable: connection closed: ttrpc: truncated frame: input ended after 3 of 6 data bytes of stream 1"]);
    srv.close();
  });
});

describe("streamHighWater", () => {
  /** After how many unread messages of a server stream the client stops reading its socket. */
  async function pausesAfter(options: { streamHighWater?: number }, max: number): Promise<number> {
    const sock = new HandFed();
    const c = new Client(sock, options);
    const stream = c.serverStream("t.Test", "Count", enc(""));
    stream[Symbol.asyncIterator](); // subscribed, never read
    for (let i = 1; i <= max; i++) {
      sock.push(encodeFrame(1, MessageType.Data, 0, enc(String(i))));
      await tick();
      if (sock.isPaused()) {
        c.close();
        return i;
      }
    }
    c.close();
    return -1;
  }

  it("the client stops reading once a stream holds more than streamHighWater unread messages (default 64)", async () => {
    expect(await pausesAfter({ streamHighWater: 3 }, 100)).toBe(4);
    expect(await pausesAfter({ streamHighWater: 1 }, 100)).toBe(2);
    expect(await pausesAfter({}, 100)).toBe(65);
    expect(() => new Client(new HandFed(), { streamHighWater: 0 })).toThrow("ttrpc: streamHighWater 0 is not a positive integer");
  });

  it("reads again once the reader has drained half of it", async () => {
    const sock = new HandFed();
    const c = new Client(sock, { streamHighWater: 4 });
    const it = c.serverStream("t.Test", "Count", enc(""))[Symbol.asyncIterator]();
    for (let i = 1; i <= 5; i++) sock.push(encodeFrame(1, MessageType.Data, 0, enc(String(i))));
    await tick();
    expect(sock.isPaused()).toBe(true);
    const read: string[] = [];
    for (let i = 0; i < 3; i++) read.push(new TextDecoder().decode((await it.next()).value as Uint8Array));
    expect([read, sock.isPaused()]).toEqual([["1", "2", "3"], false]);
    c.close();
  });
});
