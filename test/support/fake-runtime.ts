import { createServer, type Server as NetServer } from "node:net";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ConfigureRequestSchema, type ConfigureResponse, ConfigureResponseSchema, ShutdownRequestSchema, SynchronizeRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { RuntimeConnection } from "../../src/runtime/runtime-connection.js";
import { encodeInit, fromBinary } from "../../src/api/messages.js";
import { socketPath } from "./socket.js";
/** What a FakeRuntime does with a plugin that connects. */
export interface FakeRuntimeOptions {
  /** The Configure request (runtime name, version, NRI version...). */
  configure?: MessageInitShape<typeof ConfigureRequestSchema>;
  /** Events the runtime accepts; a subscription with other bits is refused by closing, as NRI runtimes do. */
  validEvents?: number;
  /** Package the runtime speaks. Default v1beta1. */
  version?: "v1alpha1" | "v1beta1";
  /** After Synchronize, send Shutdown with this reason and record what follows in `seen`. */
  shutdown?: string;
  /** After Synchronize, make these calls with raw payloads and record each outcome in `seen`. */
  calls?: readonly { method: string; payload: Uint8Array }[];
}

/**
 * A bare runtime for plugin tests on the runtime-side connection core alone (no registry, no
 * merging): takes one plugin's registration, configures it, refuses unknown events by closing
 * the connection (as the Go runtimes do, logging "invalid plugin events"), and synchronizes it
 * with nothing.
 */
export class FakeRuntime {
  readonly path = socketPath();
  /** The Configure responses received, decoded. */
  readonly configured: ConfigureResponse[] = [];
  /** Why each connection was closed by the runtime, if it was. */
  readonly refusals: string[] = [];
  /** Errors from calls to the plugin. */
  readonly errors: string[] = [];
  /** After a Shutdown: its answer and the connection's end, in the order the runtime saw them. */
  readonly seen: string[] = [];
  private readonly net: NetServer;

  constructor(o: FakeRuntimeOptions = {}) {
    this.net = createServer((sock) => {
      const conn = new RuntimeConnection(sock, { serves: [o.version ?? "v1beta1"], checkIdentity: false, updateContainers: () => [] });
      const mux = conn.mux;
      void (async () => {
        try {
          await conn.registered;
          const res = await conn.call("Configure", encodeInit(ConfigureRequestSchema, o.configure ?? {}), {});
          const answer = fromBinary(ConfigureResponseSchema, res);
          this.configured.push(answer);
          const extra = answer.events & ~(o.validEvents ?? 0x3fff);
          if (extra !== 0) {
            this.refusals.push(`invalid plugin events: 0x${extra.toString(16)}`);
            conn.close(new Error("refused"));
            return;
          }
          await conn.call("Synchronize", encodeInit(SynchronizeRequestSchema, {}), {});
          for (const c of o.calls ?? []) {
            await conn.call(c.method, c.payload, {}).then(
              (r) => this.seen.push(`${c.method} answered ${r.length} bytes`),
              (e: Error) => this.seen.push(`${c.method} failed: ${e.message}`),
            );
          }
          if (o.shutdown !== undefined) {
            void mux.closed.then((r) => this.seen.push(`closed: ${r.message}`));
            await conn.call("Shutdown", encodeInit(ShutdownRequestSchema, { reason: o.shutdown }), {}).then(
              () => this.seen.push("Shutdown answered"),
              (e: Error) => this.seen.push(`Shutdown failed: ${e.message}`),
            );
          }
        } catch (e) {
          this.errors.push((e as Error).message);
          conn.close(e as Error);
        }
      })();
    });
  }

  /** Listens on `path`. */
  async start(): Promise<this> {
    await new Promise<void>((r) => this.net.listen(this.path, r));
    return this;
  }

  close(): void {
    this.net.close();
  }
}
