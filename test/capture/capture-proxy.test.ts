import { readFileSync, readdirSync } from "node:fs";
import { type Socket, connect, createServer } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runExamplePlugin } from "../../src/cli/example-plugin.js";
import { runExampleRuntime } from "../../src/cli/example-runtime.js";
import { decodeCapture, readCapture } from "../../src/capture/capture-file.js";
import { CaptureProxy, type RecordedSession } from "../../src/capture/capture-proxy.js";
import type { Dialect } from "../../src/plugin/index.js";
import type { SessionRecord } from "../../src/capture/session-decoder.js";
import { concat } from "../support/bytes.js";
import { SCRIPT_EVENTS, STATE_CHANGE_EVENTS, withValidation } from "../support/lifecycle-events.js";
import { runs } from "../support/fc.js";
import { socketDir } from "../interop/support.js";

/** Writes `parts` one per turn of the event loop, so the other side sees separate reads, then ends. */
async function writeParts(s: Socket, parts: readonly Uint8Array[]): Promise<void> {
  for (const p of parts) {
    await new Promise<void>((r) => s.write(p, () => r()));
    await new Promise((r) => setImmediate(r));
  }
  s.end();
}

/** Everything a socket reads until the peer ends. */
function readAll(s: Socket): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  s.on("data", (d: Buffer) => parts.push(d));
  return new Promise((resolve) => s.once("end", () => resolve(concat(parts))));
}

function startProxy(
  dir: string,
  upstream: string,
  onRecord?: (session: string, r: SessionRecord) => void,
  onError?: (e: Error) => void,
): { proxy: CaptureProxy; listen: string; sessions: Promise<RecordedSession>[] } {
  const listen = join(dir, "cap.sock");
  const waiting: ((s: RecordedSession) => void)[] = [];
  const sessions = Array.from({ length: 4 }, () => new Promise<RecordedSession>((r) => waiting.push(r)));
  const proxy = new CaptureProxy({ listen, upstream, out: join(dir, "session"), ...(onRecord ? { onRecord } : {}), ...(onError ? { onError } : {}), onSession: (s) => waiting.shift()!(s) });
  return { proxy, listen, sessions };
}

describe("CaptureProxy", () => {
  it("forwards every byte unchanged both ways and records exactly those bytes, read by read", async () => {
    const chunks = fc.array(fc.uint8Array({ minLength: 1, maxLength: 3000 }), { maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(chunks, chunks, fc.boolean(), async (fromPlugin, fromRuntime, pluginEndsFirst) => {
        const dir = socketDir();
        const upstream = join(dir, "rt.sock");
        let runtimeGot!: Promise<Uint8Array>;
        let runtimeSide!: Socket;
        const accepted = new Promise<void>((resolve) => {
          const server = createServer({ allowHalfOpen: true }, (s) => {
            runtimeSide = s;
            runtimeGot = readAll(s);
            server.close();
            resolve();
          });
          server.listen(upstream);
        });
        const { proxy, listen, sessions } = startProxy(dir, upstream);
        await proxy.start();
        const plugin = connect({ path: listen, allowHalfOpen: true });
        const pluginGot = readAll(plugin);
        await accepted;
        if (pluginEndsFirst) {
          await writeParts(plugin, fromPlugin);
          await writeParts(runtimeSide, fromRuntime);
        } else {
          await writeParts(runtimeSide, fromRuntime);
          await writeParts(plugin, fromPlugin);
        }
        expect(await runtimeGot).toEqual(concat(fromPlugin));
        expect(await pluginGot).toEqual(concat(fromRuntime));
        const session = await sessions[0]!;
        await proxy.close();
        const capture = readCapture(session.indexPath);
        expect(capture.bytes.p2r).toEqual(concat(fromPlugin));
        expect(capture.bytes.r2p).toEqual(concat(fromRuntime));
        for (const d of ["p2r", "r2p"] as const) {
          const list = capture.index.chunks.filter((c) => c.dir === d);
          expect(concat(list.map((c) => capture.bytes[d].subarray(c.offset, c.offset + c.length)))).toEqual(capture.bytes[d]);
          expect(list.every((c, i) => c.offset === (i === 0 ? 0 : list[i - 1]!.offset + list[i - 1]!.length))).toBe(true);
          expect(capture.index.closed!.find((c) => c.dir === d)!.bytes).toBe(capture.bytes[d].length);
        }
        const times = capture.index.chunks.map((c) => c.t_ns);
        expect(times).toEqual([...times].sort((a, b) => a - b));
        expect(capture.index.chunks.map((c) => c.seq)).toEqual(capture.index.chunks.map((_, i) => i));
      }),
      { numRuns: runs(0.1) },
    );
  });

  it("names later connections FILE-2, FILE-3 and refuses a connection it cannot forward", async () => {
    const dir = socketDir();
    const upstream = join(dir, "rt.sock");
    const server = createServer((s) => s.end(Buffer.from("hello")));
    await new Promise<void>((r) => server.listen(upstream, r));
    let errors!: (e: Error) => void;
    const { proxy, listen, sessions } = startProxy(dir, upstream, undefined, (e) => errors(e));
    await proxy.start();
    // Sessions are reported as they finish; each connection is let finish before the next one starts, so the reports come in naming order.
    const paths: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = connect(listen);
      await readAll(s);
      s.end();
      paths.push((await sessions[i]!).indexPath);
    }
    expect(paths).toEqual([join(dir, "session.index.json"), join(dir, "session-2.index.json")]);
    expect(JSON.parse(readFileSync(join(dir, "session-2.index.json"), "utf8"))).toMatchObject({ format: "nri-capture/v1", session: "session-2", files: { p2r: "session-2.p2r.bin", r2p: "session-2.r2p.bin" } });
    await new Promise<void>((r) => server.close(() => r()));
    // With the upstream gone, a connection is closed unrecorded and the refusal is reported.
    const refused = new Promise<Error>((r) => (errors = r));
    const s = connect(listen);
    s.on("error", () => undefined);
    await readAll(s);
    expect((await refused).message).toBe(`record: cannot connect to upstream ${upstream}: connect ENOENT ${upstream}`);
    await proxy.close();
    expect(readdirSync(dir).filter((f) => f.startsWith("session-3"))).toEqual([]);
  });
});

/** The r2p calls on the plugin's conn, as the dedicated call each stands for. */
function pluginCalls(rs: SessionRecord[]): string[] {
  return rs.filter((r) => r.dir === "r2p" && r.conn === 1 && r.type === "request").map((r) => r.translatesTo ?? r.method!);
}

/** What the example runtime sends the example plugin: the script, validation included, between Configure/Synchronize and Shutdown. */
const SCRIPT = ["Configure", "Synchronize", ...withValidation(SCRIPT_EVENTS), "Shutdown"];

describe.each(["v1beta1", "v1alpha1", "statechange"] as const)("recording the example runtime with the example %s plugin", (dialect: Dialect) => {
  it("both sides finish their script through the proxy, and the capture decodes to it, live and from disk alike", async () => {
    const dir = socketDir();
    const upstream = join(dir, "rt.sock");
    const live: SessionRecord[] = [];
    const { proxy, listen, sessions } = startProxy(dir, upstream, (session, r) => {
      expect(session).toBe("session");
      live.push(r);
    });
    await proxy.start();
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    const runtimeLines: string[] = [];
    const runtime = runExampleRuntime({ socketPath: upstream, print: (l) => (l.includes('"ready"') ? ready() : runtimeLines.push(l)) });
    await isReady;
    const pluginLines: string[] = [];
    const plugin = runExamplePlugin({ socketPath: listen, dialect, name: "rec", idx: "20", print: (l) => pluginLines.push(l) });
    expect(await runtime).toBe(0);
    await plugin;
    const session = await sessions[0]!;
    await proxy.close();

    const records = decodeCapture(readCapture(session.indexPath));
    expect(records.filter((r) => r.error !== undefined)).toEqual([]);
    expect(live).toEqual(records);

    const revision = dialect === "v1beta1" ? "v1beta1" : "v1alpha1";
    expect(records.every((r) => r.revision === revision)).toBe(true);
    const register = records.find((r) => r.method === "RegisterPlugin" && r.type === "request")!;
    expect(register).toMatchObject({ dir: "p2r", conn: 2, payload: { pluginName: "rec", pluginIdx: "20" } });
    if (dialect === "statechange") {
      // The first dedicated call is refused, then all nine go as StateChange.
      expect(pluginCalls(records)).toEqual([...SCRIPT.slice(0, 3), ...SCRIPT.slice(2)]);
      const refused = records.find((r) => r.status !== undefined)!;
      expect(refused).toMatchObject({ dir: "p2r", method: "RunPodSandbox", calls: "dedicated", status: { code: 12, name: "unimplemented" } });
      const calls = records.filter((r) => r.dir === "r2p" && r.conn === 1 && r.type === "request").slice(3);
      for (const c of calls) expect([c.translatesTo ?? c.method, c.calls]).toEqual([c.translatesTo ?? c.method, STATE_CHANGE_EVENTS.has(c.translatesTo ?? c.method!) ? "statechange" : "common"]);
    } else {
      expect(pluginCalls(records)).toEqual(SCRIPT);
      expect(records.some((r) => r.calls === "statechange")).toBe(false);
    }
    const created = records.find((r) => r.dir === "p2r" && r.method === "CreateContainer")!;
    expect(created.payload).toEqual({ adjust: { annotations: { "nri-wire/seen": "true" }, env: [{ key: "NRI_WIRE_SEEN", value: "true" }] } });
    const shutdown = records.find((r) => r.method === "Shutdown" && r.type === "request")!;
    expect(shutdown.payload).toEqual(dialect === "v1beta1" ? { reason: "example runtime finished its script" } : {});
    // The plugin saw every event: the proxy changed nothing.
    expect(pluginLines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(SCRIPT);
  });
});
