import { describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import * as alpha from "../../src/v1alpha1.js";
import * as beta from "../../src/v1beta1.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import type { CallContext } from "../../src/ttrpc/server.js";
import { Code } from "../../src/ttrpc/status.js";
import { type Transport, createClient, serviceMethods } from "../../src/ttrpc/typed.js";
import { messageRegistry, reflection } from "../../src/wire/index.js";

/**
 * Typed clients and services code messages through the registry they are given: the generated
 * codecs of both revisions here, so they write what toBinary writes and decode strictly (bytes
 * protobuf-es would accept but protobuf-go refuses are INVALID_ARGUMENT).
 */

const messages = messageRegistry([alpha.messages_v1alpha1_api, beta.messages_v1beta1_api], reflection);

const h = (s: string): Uint8Array => new Uint8Array(Buffer.from(s.replace(/\s+/g, ""), "hex"));
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

const ctx: CallContext = {
  service: "s",
  method: "m",
  metadata: [],
  timeoutNano: 0,
  deadline: undefined,
  signal: new AbortController().signal,
};

describe("typed services and clients through the codec registry", () => {
  it("the tables of both revisions hold a generated codec for every message", () => {
    for (const file of [alpha.file_v1alpha1_api, beta.file_v1beta1_api]) {
      for (const m of file.messages) expect(messages.codecFor(m), m.typeName).toBeDefined();
    }
  });

  it("a handler's plain-object answer is encoded as toBinary(create(...)) would", async () => {
    const methods = serviceMethods(beta.Plugin, {
      configure: () => ({ events: 0x7fff, failurePolicy: { keepConnected: true } }),
    }, { messages });
    const out = await (methods.Configure!.handler as (p: Uint8Array, c: CallContext) => Promise<Uint8Array>)(new Uint8Array(0), ctx);
    expect(hex(out)).toBe(hex(toBinary(beta.ConfigureResponseSchema, create(beta.ConfigureResponseSchema, { events: 0x7fff, failurePolicy: { keepConnected: true } }))));
  });

  it("a request that runs past its parent is INVALID_ARGUMENT naming the message and field", async () => {
    let called = false;
    const methods = serviceMethods(alpha.Plugin, {
      stateChange: () => {
        called = true;
        return {};
      },
    }, { messages });
    const handler = methods.StateChange!.handler as (p: Uint8Array, c: CallContext) => Promise<Uint8Array>;
    const e = await handler(h("1a03420341 3d31"), ctx).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(RpcError);
    expect((e as RpcError).code).toBe(Code.INVALID_ARGUMENT);
    expect((e as RpcError).rawMessage).toBe("decode nri.pkg.api.v1alpha1.Container: field env (8): length 3 exceeds remaining 1");
    expect(called).toBe(false);
  });

  it("a client sends the generated encoding and decodes the answer with the generated decoder", async () => {
    const sent: Uint8Array[] = [];
    const transport: Transport = {
      call: async (_s, _m, payload) => {
        sent.push(payload);
        return h("10 ffffffffffffffffff7f"); // events: a varint overflowing 64 bits
      },
    };
    const client = createClient(beta.Plugin, transport, { messages });
    const e = await client.configure({ runtimeName: "r", registrationTimeout: 5n }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(hex(sent[0]!)).toBe(hex(toBinary(beta.ConfigureRequestSchema, create(beta.ConfigureRequestSchema, { runtimeName: "r", registrationTimeout: 5n }))));
    expect((e as RpcError).rawMessage).toBe("decode nri.pkg.api.v1beta1.ConfigureResponse: field events (2): varint overflows 64 bits");
  });

  it("with a registry of no tables and the fallback, messages are coded reflectively: protobuf-es's leniency, its errors named by message", async () => {
    const transport: Transport = { call: async () => h("10 ffffffffffffffffff7f") };
    const reflective = messageRegistry([], reflection);
    const answer = await createClient(beta.Plugin, transport, { messages: reflective }).configure({});
    expect(answer.events).toBe(-1);
    const methods = serviceMethods(beta.Plugin, { configure: () => ({}) }, { messages: reflective });
    const handler = methods.Configure!.handler as (p: Uint8Array, c: CallContext) => Promise<Uint8Array>;
    const e = await handler(h("1a 05 41"), ctx).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((e as RpcError).code).toBe(Code.INVALID_ARGUMENT);
    expect((e as RpcError).rawMessage).toBe("decode nri.pkg.api.v1beta1.ConfigureRequest: premature EOF");
  });
});
