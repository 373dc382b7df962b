import { describe, expect, it } from "vitest";
import { Client } from "../../src/ttrpc/client.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import type { ClientInterceptor, ServerCall, ServerInterceptor } from "../../src/ttrpc/interceptors.js";
import { Server } from "../../src/ttrpc/server.js";
import { expectRejection } from "../support/errors.js";
import { logging } from "../support/interceptors.js";
import { Code, Harness, dec, enc, testServer } from "./harness.js";

async function harness(server: Server): Promise<Harness> {
  return new Harness(server).start();
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const m of it) out.push(dec(m));
  return out;
}

describe("ttrpc interceptors", () => {
  it("run the first outermost on both sides, around the handler, in and out", async () => {
    const log: string[] = [];
    const server = testServer({ interceptors: [logging<ServerCall, Uint8Array>(log, "s1"), logging<ServerCall, Uint8Array>(log, "s2")] });
    const h = await harness(server);
    const c = new Client(await h.socket(), { interceptors: [logging(log, "c1"), logging(log, "c2")] });
    expect(dec(await c.call("t.Test", "Echo", enc("hi")))).toBe("hi");
    expect(log).toEqual(["c1>Echo", "c2>Echo", "s1>Echo", "s2>Echo", "<s2", "<s1", "<c2", "<c1"]);
    log.length = 0;
    await expectRejection(RpcError, c.call("t.Test", "Fail", enc("5")));
    expect(log).toEqual(["c1>Fail", "c2>Fail", "s1>Fail", "s2>Fail", "<s2!", "<s1!", "<c2!", "<c1!"]);
    c.close();
    h.close();
  });

  it("let the client change metadata, payload and timeout before sending; the server sees them", async () => {
    const seen: ServerCall[] = [];
    const server = testServer({ interceptors: [(next) => (call) => (seen.push(call), next(call))] });
    const h = await harness(server);
    const stamp: ClientInterceptor = (next) => (call) => {
      call.metadata.push({ key: "traceparent", value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" });
      return next({ ...call, payload: enc(`${dec(call.payload)}!`), timeoutMs: 5000 });
    };
    const c = new Client(await h.socket(), { interceptors: [stamp] });
    expect(dec(await c.call("t.Test", "Echo", enc("hi"), { metadata: { who: "me" } }))).toBe("hi!");
    const call = seen[0]!;
    expect([call.kind, call.service, call.method, dec(call.payload), call.timeoutNano]).toEqual(["unary", "t.Test", "Echo", "hi!", 5e9]);
    expect(call.metadata).toEqual([
      { key: "who", value: "me" },
      { key: "traceparent", value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    ]);
    expect(call.deadline).toBeTypeOf("number");
    expect(call.signal.aborted).toBe(false);
    c.close();
    h.close();
  });

  it("let the server change the request before its handler and the answer after it", async () => {
    const server = testServer({
      interceptors: [(next) => async (call) => enc(`[${dec(await next({ ...call, payload: enc(dec(call.payload).toUpperCase()) }))}]`)],
    });
    const h = await harness(server);
    const c = new Client(await h.socket());
    expect(dec(await c.call("t.Test", "Echo", enc("hi")))).toBe("[HI]");
    c.close();
    h.close();
  });

  it("answer without calling next: the client sends nothing, the server calls no handler", async () => {
    const handled: string[] = [];
    const server = new Server({ interceptors: [(next) => (call) => (call.method === "Cached" ? Promise.resolve(enc("cached")) : next(call))] }).register("t.Test", {
      Cached: { kind: "unary", handler: (r) => (handled.push("Cached"), r) },
      Echo: { kind: "unary", handler: (r) => (handled.push("Echo"), r) },
    });
    const h = await harness(server);
    const local: ClientInterceptor = () => async () => enc("local");
    const offline = new Client(await h.socket(), { interceptors: [local] });
    expect(dec(await offline.call("t.Test", "Echo", enc("x")))).toBe("local");
    const c = new Client(await h.socket());
    expect(dec(await c.call("t.Test", "Cached", enc("x")))).toBe("cached");
    expect(dec(await c.call("t.Test", "Echo", enc("y")))).toBe("y");
    expect(handled).toEqual(["Echo"]);
    offline.close();
    c.close();
    h.close();
  });

  it("see and transform errors: the server's interceptor error is the status, the client's is the call's", async () => {
    const server = testServer({
      interceptors: [
        (next) => async (call) => {
          if (call.metadata.some((m) => m.key === "deny")) throw new RpcError(Code.PERMISSION_DENIED, "denied by interceptor");
          return next(call);
        },
      ],
    });
    const h = await harness(server);
    const c = new Client(await h.socket());
    const denied = await expectRejection(RpcError, c.call("t.Test", "Echo", enc("x"), { metadata: { deny: "1" } }));
    expect([denied.code, denied.rawMessage]).toEqual([Code.PERMISSION_DENIED, "denied by interceptor"]);
    const fallback: ClientInterceptor = (next) => (call) => next(call).catch((e: unknown) => (e instanceof RpcError && e.code === Code.NOT_FOUND ? enc("fallback") : Promise.reject(new Error(`wrapped: ${(e as Error).message}`))));
    const f = new Client(await h.socket(), { interceptors: [fallback] });
    expect(dec(await f.call("t.Test", "Fail", enc(String(Code.NOT_FOUND))))).toBe("fallback");
    const wrapped = await expectRejection(Error, f.call("t.Test", "Fail", enc(String(Code.INTERNAL))));
    expect(wrapped.message).toBe("wrapped: internal: wanted failure");
    // A thrown (not rejected) error of a server interceptor is the status too.
    const thrower = testServer({ interceptors: [() => () => { throw new Error("sync throw"); }] });
    const h2 = await harness(thrower);
    const c2 = new Client(await h2.socket());
    const e2 = await expectRejection(RpcError, c2.call("t.Test", "Echo", enc("x")));
    expect([e2.code, e2.rawMessage]).toEqual([Code.UNKNOWN, "sync throw"]);
    c.close();
    f.close();
    c2.close();
    h.close();
    h2.close();
  });

  it("time a call: the interceptor sees its outcome after the handler ran", async () => {
    const outcomes: string[] = [];
    const timing: ClientInterceptor = (next) => async (call) => {
      const started = performance.now();
      try {
        return await next(call);
      } finally {
        outcomes.push(`${call.method} ${performance.now() - started >= 0 ? "timed" : "?"}`);
      }
    };
    const h = await harness(testServer());
    const c = new Client(await h.socket(), { interceptors: [timing] });
    await c.call("t.Test", "Sleep", enc("5"));
    await expectRejection(RpcError, c.call("t.Test", "Sleep", enc("1000"), { timeoutMs: 10 }));
    expect(outcomes).toEqual(["Sleep timed", "Sleep timed"]);
    c.close();
    h.close();
  });

  it("wrap whole streams on both sides: next settles when the stream ends; messages pass outside the chain", async () => {
    const log: string[] = [];
    const server = testServer({
      interceptors: [
        (next) => async (call) => {
          log.push(`s>${call.kind} ${call.method} ${dec(call.payload)} ${call.metadata.map((m) => m.value).join(",")}`);
          const answer = await next(call);
          log.push(`<s ${answer.length}`);
          return answer;
        },
      ],
    });
    const h = await harness(server);
    const tag: ClientInterceptor = (next) => async (call) => {
      call.metadata.push({ key: "tag", value: call.method });
      const answer = await next(call);
      log.push(`<c ${call.kind} ${dec(answer)}`);
      return answer;
    };
    const c = new Client(await h.socket(), { interceptors: [tag] });
    expect(await collect(c.serverStream("t.Test", "Count", enc("3")))).toEqual(["0", "1", "2"]);
    async function* nums() {
      yield enc("2");
      yield enc("5");
    }
    expect(dec(await c.clientStream("t.Test", "Sum", nums()))).toBe("7");
    expect(await collect(c.bidiStream("t.Test", "Chat", nums()))).toEqual(["2", "5"]);
    expect(log).toEqual([
      "s>server_streaming Count 3 Count",
      "<s 0",
      "<c server_streaming ",
      "s>client_streaming Sum  Sum",
      "<s 1",
      "<c client_streaming 7",
      "s>bidi_streaming Chat  Chat",
      "<s 0",
      "<c bidi_streaming ",
    ]);
    c.close();
    h.close();
  });

  it("end a stream with an interceptor's answer or error: a last message, a result, the status", async () => {
    const server = testServer({
      interceptors: [
        (next) => async (call) => {
          if (call.method === "Count" && dec(call.payload) === "0") return enc("instead");
          if (call.method === "Count" && dec(call.payload) === "9") throw new RpcError(Code.OUT_OF_RANGE, "too many");
          return next(call);
        },
      ],
    });
    const h = await harness(server);
    const c = new Client(await h.socket());
    expect(await collect(c.serverStream("t.Test", "Count", enc("0")))).toEqual(["instead"]);
    const e = await expectRejection(RpcError, collect(c.serverStream("t.Test", "Count", enc("9"))));
    expect([e.code, e.rawMessage]).toEqual([Code.OUT_OF_RANGE, "too many"]);
    const local: ClientInterceptor = (next) => async (call) => (call.kind === "server_streaming" ? enc("from the client") : next(call));
    const l = new Client(await h.socket(), { interceptors: [local] });
    expect(await collect(l.serverStream("t.Test", "Count", enc("2")))).toEqual(["from the client"]);
    async function* one() {
      yield enc("4");
    }
    expect(dec(await l.clientStream("t.Test", "Sum", one()))).toBe("4");
    const failing: ClientInterceptor = () => async () => {
      throw new RpcError(Code.UNAVAILABLE, "not now");
    };
    const f = new Client(await h.socket(), { interceptors: [failing] });
    const e2 = await expectRejection(RpcError, collect(f.bidiStream("t.Test", "Chat", one())));
    expect([e2.code, e2.rawMessage]).toEqual([Code.UNAVAILABLE, "not now"]);
    const e3 = await expectRejection(RpcError, f.clientStream("t.Test", "Sum", one()));
    expect(e3.rawMessage).toBe("not now");
    c.close();
    l.close();
    f.close();
    h.close();
  });

  it("refuse an interceptors option that is not an array of functions", async () => {
    const bad = ["x"] as unknown as ServerInterceptor[];
    expect(() => new Server({ interceptors: bad })).toThrow(new TypeError("ttrpc: interceptors[0] is a string, not a function"));
    const h = await harness(testServer());
    const s = await h.socket();
    expect(() => new Client(s, { interceptors: null as unknown as ClientInterceptor[] })).toThrow(new TypeError("ttrpc: interceptors is a null, not an array of functions"));
    s.destroy();
    h.close();
  });
});
