import { type Socket, connect } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { Client } from "../../src/ttrpc/client.js";
import type { ConnectionOptions } from "../../src/ttrpc/connection.js";
import { RpcError } from "../../src/ttrpc/errors.js";
import { Server, type ServerConnection, type ServerOptions } from "../../src/ttrpc/server.js";
import { Code } from "../../src/ttrpc/status.js";
import { socketPath } from "../support/socket.js";
import { sleep } from "../support/wait.js";

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array): string => new TextDecoder().decode(b);


/** A server with the test service `t.Test` registered. */
export function testServer(options: ServerOptions = {}): Server {
  return new Server(options).register("t.Test", {
    Echo: { kind: "unary", handler: (r) => r },
    Grow: { kind: "unary", handler: (r) => new Uint8Array(Number(dec(r))) },
    Sleep: {
      kind: "unary",
      handler: async (r, ctx) => {
        await sleep(Number(dec(r)), ctx.signal);
        return r;
      },
    },
    Fail: {
      kind: "unary",
      handler: (r) => {
        const code = Number(dec(r));
        if (code === -1) throw new Error("plain failure");
        throw new RpcError(code, "wanted failure");
      },
    },
    Count: {
      kind: "server_streaming",
      async *handler(r, ctx) {
        for (let i = 0; i < Number(dec(r)); i++) {
          if (ctx.signal.aborted) return;
          yield enc(String(i));
        }
      },
    },
    Sum: {
      kind: "client_streaming",
      handler: async (reqs) => {
        let total = 0;
        for await (const r of reqs) total += Number(dec(r));
        return enc(String(total));
      },
    },
    Chat: {
      kind: "bidi_streaming",
      async *handler(reqs) {
        for await (const r of reqs) yield r;
      },
    },
  });
}

/** A listening server and a way to connect clients (and raw sockets) to it. */
export class Harness {
  readonly path = socketPath("s.sock");
  readonly connections: ServerConnection[] = [];

  constructor(readonly server: Server = testServer()) {}

  async start(): Promise<this> {
    const srv = await this.server.listen(this.path);
    srv.on("connection", () => undefined);
    const serve = this.server.serve.bind(this.server);
    this.server.serve = (socket) => {
      const c = serve(socket);
      this.connections.push(c);
      return c;
    };
    return this;
  }

  async socket(): Promise<Socket> {
    const s = connect(this.path);
    await new Promise<void>((resolve, reject) => {
      s.once("connect", resolve);
      s.once("error", reject);
    });
    return s;
  }

  async client(options: ConnectionOptions = {}): Promise<Client> {
    return new Client(await this.socket(), options);
  }

  close(): void {
    this.server.close();
  }
}

export { Code };

/** A Harness serving for the calling describe block: started before its tests, closed after. */
export function useHarness(): Harness {
  const h = new Harness();
  beforeAll(() => h.start());
  afterAll(() => h.close());
  return h;
}
