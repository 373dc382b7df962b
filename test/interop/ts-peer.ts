/**
 * ts-peer: the TypeScript twin of test/interop/go-peer, built on nri-wire's ttrpc. Same command
 * line, same output, same conformance checks (see ./PEERS.md, section "ttrpc peers"):
 *
 *   npx tsx test/interop/ts-peer.ts serve --socket PATH
 *   npx tsx test/interop/ts-peer.ts call  --socket PATH
 *   npx tsx test/interop/ts-peer.ts bench --socket PATH --conc N --size B --duration S
 *
 * `call` runs the checks of go-peer's call.go under the same names with the same expectations
 * (the reference server's answers). Where the TypeScript client cannot do what the Go client
 * does, or does it differently, the check keeps its name and adapts its method; each such place
 * says so below.
 */
import { randomBytes as nodeRandomBytes } from "node:crypto";
import { unlink } from "node:fs/promises";
import { type Socket, createConnection } from "node:net";
import { performance } from "node:perf_hooks";
import {
  type CallContext,
  type KeyValue,
  Client,
  Code,
  DEFAULT_MAX_DATA_LENGTH,
  Flag,
  FrameDecoder,
  MessageType,
  RpcError,
  Server,
  decodeResponse,
  encodeFrame,
  encodeRequest,
} from "../../src/ttrpc/index.js";
import { goCodeName } from "../../src/runtime/go/status-text.js";
import { hex } from "../support/bytes.js";
import { sleep } from "../support/wait.js";

const SERVICE = "ttrpc.peer.v1.Peer";
const MAX_COUNT = 100000;
const MAX_FRAME_DATA = DEFAULT_MAX_DATA_LENGTH; // 4 MiB
const EMPTY = new Uint8Array(0);
const enc = new TextEncoder();
const dec = new TextDecoder();

// ---------------------------------------------------------------------------------------------
// Small helpers shared by the subcommands
// ---------------------------------------------------------------------------------------------

function bytes(s: string): Uint8Array {
  return enc.encode(s);
}

function text(b: Uint8Array): string {
  return dec.decode(b);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}


/** Go's flag package conventions: `-name value`, `--name value`, `-name=value`, `--name=value`. */
function parseFlags(args: readonly string[], names: readonly string[]): Map<string, string> | string {
  const out = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const m = /^--?([^=]+)(?:=(.*))?$/.exec(a);
    if (m === null) return `unexpected argument ${JSON.stringify(a)}`;
    const name = m[1]!;
    if (!names.includes(name)) return `flag provided but not defined: -${name}`;
    let value = m[2];
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) return `flag needs an argument: -${name}`;
    }
    out.set(name, value);
  }
  return out;
}

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/** strconv.ParseUint(s, 10, bits). */
function parseUint(s: string, max: bigint = U64_MAX): bigint | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v > max ? undefined : v;
}

/** strconv.ParseInt(s, 10, 64). */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v < I64_MIN || v > I64_MAX ? undefined : v;
}

/** Go's %q, close enough for the details printed here. */
function goQuote(v: string | Uint8Array): string {
  const b = typeof v === "string" ? enc.encode(v) : v;
  let out = '"';
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      if (c === 0x22) out += '\\"';
      else if (c === 0x5c) out += "\\\\";
      else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
      else if (c === 0x07) out += "\\a";
      else if (c === 0x08) out += "\\b";
      else if (c === 0x0c) out += "\\f";
      else if (c === 0x0a) out += "\\n";
      else if (c === 0x0d) out += "\\r";
      else if (c === 0x09) out += "\\t";
      else if (c === 0x0b) out += "\\v";
      else out += "\\x" + c.toString(16).padStart(2, "0");
      continue;
    }
    // A UTF-8 sequence: printed as is when valid, else byte by byte.
    const n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    let rune = -1;
    if (n > 0 && i + n <= b.length) {
      let r = c & (0xff >> (n + 1));
      let ok = true;
      for (let k = 1; k < n; k++) {
        const cc = b[i + k]!;
        if ((cc & 0xc0) !== 0x80) ok = false;
        r = (r << 6) | (cc & 0x3f);
      }
      const min = n === 2 ? 0x80 : n === 3 ? 0x800 : 0x10000;
      if (ok && r >= min && r <= 0x10ffff && !(r >= 0xd800 && r <= 0xdfff)) rune = r;
    }
    if (rune < 0) {
      out += "\\x" + c.toString(16).padStart(2, "0");
      i++;
      continue;
    }
    i += n;
    if (rune <= 0xa0 || rune === 0xad || rune === 0xfeff) out += "\\u" + rune.toString(16).padStart(4, "0");
    else out += String.fromCodePoint(rune);
  }
  return out + '"';
}

/** A pushable async iterable: the client side of a stream the checks drive step by step. */
class Pushable implements AsyncIterable<Uint8Array> {
  private readonly items: Uint8Array[] = [];
  private closed = false;
  private waiter: ((r: IteratorResult<Uint8Array>) => void) | undefined;

  push(v: Uint8Array): void {
    if (this.closed) return;
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      w({ value: v, done: false });
    } else this.items.push(v);
  }

  close(): void {
    this.closed = true;
    const w = this.waiter;
    if (w !== undefined && this.items.length === 0) {
      this.waiter = undefined;
      w({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: (): Promise<IteratorResult<Uint8Array>> => {
        const v = this.items.shift();
        if (v !== undefined) return Promise.resolve({ value: v, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiter = resolve));
      },
      return: (): Promise<IteratorResult<Uint8Array>> => {
        this.closed = true;
        this.items.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

function dial(socket: string, timeoutMs = 5000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createConnection(socket);
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`dial unix ${socket}: i/o timeout`));
    }, timeoutMs);
    s.once("connect", () => {
      clearTimeout(timer);
      s.off("error", reject);
      resolve(s);
    });
    s.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Protobuf bits: `repeated ttrpc.KeyValue list = 1`
// ---------------------------------------------------------------------------------------------

function varint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function appendBytesField(out: number[], field: number, b: Uint8Array): void {
  varint(out, (field << 3) | 2);
  varint(out, b.length);
  for (const x of b) out.push(x);
}

function encodeKVList(list: readonly KeyValue[]): Uint8Array {
  const out: number[] = [];
  for (const e of list) {
    const inner: number[] = [];
    if (e.key !== "") appendBytesField(inner, 1, bytes(e.key));
    if (e.value !== "") appendBytesField(inner, 2, bytes(e.value));
    appendBytesField(out, 1, Uint8Array.from(inner));
  }
  return Uint8Array.from(out);
}

/** Walks the fields of a message: wire types 0 and 2 only (all this format has). */
function walkFields(b: Uint8Array, fn: (num: number, typ: number, v: Uint8Array) => void): void {
  let i = 0;
  const readVarint = (): number => {
    let r = 0;
    let mul = 1;
    for (let k = 0; k < 10; k++) {
      if (i >= b.length) throw new Error("unexpected end of data");
      const c = b[i++]!;
      r += (c & 0x7f) * mul;
      mul *= 128;
      if (c < 0x80) return r;
    }
    throw new Error("varint overflow");
  };
  while (i < b.length) {
    const tag = readVarint();
    const num = Math.floor(tag / 8);
    const typ = tag & 7;
    if (num === 0) throw new Error("field number 0");
    if (typ === 0) {
      readVarint();
      fn(num, typ, EMPTY);
    } else if (typ === 2) {
      const n = readVarint();
      if (i + n > b.length) throw new Error("unexpected end of data");
      fn(num, typ, b.subarray(i, i + n));
      i += n;
    } else throw new Error(`unsupported wire type ${typ}`);
  }
}

function decodeKVList(b: Uint8Array): KeyValue[] {
  const out: KeyValue[] = [];
  walkFields(b, (num, typ, v) => {
    if (num !== 1 || typ !== 2) throw new Error(`unexpected field ${num} type ${typ}`);
    let key = "";
    let value = "";
    walkFields(v, (n, t, sv) => {
      if (n === 1 && t === 2) key = text(sv);
      else if (n === 2 && t === 2) value = text(sv);
    });
    out.push({ key, value });
  });
  return out;
}

/** Go's fmt.Sprint of []kv: `[{alpha 1} {beta } ...]`. */
function kvString(list: readonly KeyValue[]): string {
  return "[" + list.map((e) => `{${e.key} ${e.value}}`).join(" ") + "]";
}

// ---------------------------------------------------------------------------------------------
// serve
// ---------------------------------------------------------------------------------------------

function badArg(msg: string): RpcError {
  return new RpcError(Code.INVALID_ARGUMENT, msg);
}

/** Byte-wise comparison of UTF-8, as Go's sort.Strings. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

function waitOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    // setTimeout takes at most 2^31-1 ms; a longer sleep outlives any test anyway.
    const timer = setTimeout(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.min(ms, 0x7fffffff),
    );
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function peerServer(): Server {
  const server = new Server();
  server.register(SERVICE, {
    Echo: { kind: "unary", handler: (p) => p },
    Fail: {
      kind: "unary",
      handler: (p) => {
        const c = parseUint(text(p), 0xffffffffn);
        if (c === undefined) throw badArg(`Fail: bad status code ${goQuote(p)}`);
        if (c === 0n) return EMPTY;
        // codes.Code(c) travels as int32, as in Go.
        throw new RpcError(Number(BigInt.asIntN(32, c)) as Code, "peer failure");
      },
    },
    Sleep: {
      kind: "unary",
      handler: async (p, ctx) => {
        const s = text(p);
        const colon = s.indexOf(":");
        const msPart = colon < 0 ? s : s.slice(0, colon);
        const ms = parseUint(msPart);
        if (ms === undefined) throw badArg(`Sleep: not a decimal number: ${goQuote(msPart)}`);
        const copy = p.slice(); // the request's bytes are a view into a socket chunk
        await waitOrAbort(Number(ms), ctx.signal);
        return copy;
      },
    },
    Metadata: {
      kind: "unary",
      handler: (_p, ctx) => encodeKVList([...ctx.metadata].sort((a, b) => compareUtf8(a.key, b.key))),
    },
    Deadline: {
      kind: "unary",
      handler: (_p, ctx: CallContext) => {
        if (ctx.deadline === undefined) return bytes("none");
        return bytes(String(Math.trunc((ctx.deadline - performance.now()) * 1e6)));
      },
    },
    Count: {
      kind: "server_streaming",
      handler: async function* (p) {
        const n = parseUint(text(p));
        if (n === undefined) throw badArg(`Count: not a decimal number: ${goQuote(p)}`);
        if (n > BigInt(MAX_COUNT)) throw badArg(`Count: ${n} is over ${MAX_COUNT}`);
        for (let i = 0; i < Number(n); i++) yield bytes(String(i));
      },
    },
    Sum: {
      kind: "client_streaming",
      handler: async (items) => {
        let sum = 0n;
        for await (const m of items) {
          const v = parseInt64(text(m));
          if (v === undefined) throw badArg(`Sum: not a decimal number: ${goQuote(m)}`);
          sum = BigInt.asIntN(64, sum + v); // int64 wraps, as in Go
        }
        return bytes(sum.toString());
      },
    },
    Chat: {
      kind: "bidi_streaming",
      handler: async function* (items) {
        for await (const m of items) yield m.slice();
      },
    },
  });
  return server;
}

/** The required --socket of a command; undefined, with the usage on stderr, when it is missing. */
function socketFlag(args: readonly string[], command: string): string | undefined {
  const flags = parseFlags(args, ["socket"]);
  const socket = typeof flags === "string" ? undefined : flags.get("socket");
  if (socket !== undefined && socket !== "") return socket;
  if (typeof flags === "string") process.stderr.write(flags + "\n");
  process.stderr.write(`usage: ts-peer ${command} --socket PATH\n`);
  return undefined;
}

async function runServe(args: readonly string[]): Promise<number> {
  const socket = socketFlag(args, "serve");
  if (socket === undefined) return 2;
  const server = peerServer();
  try {
    await server.listen(socket);
  } catch (e) {
    process.stderr.write(`listen: ${(e as Error).message}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    const stop = (sig: NodeJS.Signals): void => {
      process.stderr.write(`ts-peer serve: ${sig}, stopping\n`);
      server.close();
      unlink(socket).then(
        () => resolve(0),
        () => resolve(0),
      );
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    process.stdout.write("ready\n");
  });
}

// ---------------------------------------------------------------------------------------------
// call: raw frames
// ---------------------------------------------------------------------------------------------

interface RawFrame {
  readonly length: number;
  readonly streamId: number;
  readonly type: number;
  readonly flags: number;
  readonly data: Uint8Array;
}

const ZERO_FRAME: RawFrame = { length: 0, streamId: 0, type: 0, flags: 0, data: EMPTY };

function frameString(f: RawFrame): string {
  return `frame{len=${f.length} sid=${f.streamId} type=${f.type} flags=0x${f.flags.toString(16)}}`;
}

class NoFrame extends Error {
  constructor() {
    super("no frame before timeout");
  }
}

/** A raw ttrpc connection: frames written by hand, frames read one by one. */
class RawConn {
  private readonly frames: RawFrame[] = [];
  private head = 0;
  private ended: Error | undefined;
  private wake: (() => void) | undefined;
  private readonly decoder = new FrameDecoder({ maxDataLength: MAX_FRAME_DATA + 1024 });

  constructor(private readonly sock: Socket) {
    sock.on("data", (chunk: Buffer) => {
      try {
        for (const f of this.decoder.decode(chunk)) {
          if (f.oversize !== 0) {
            this.finish(new Error(`absurd frame length ${f.oversize}`));
            return;
          }
          this.frames.push({ length: f.data.length, streamId: f.streamId, type: f.type, flags: f.flags, data: f.data.slice() });
        }
      } catch (e) {
        this.finish(e as Error);
      }
      this.notify();
    });
    sock.on("end", () => this.finish(new Error("EOF")));
    sock.on("close", () => this.finish(new Error("EOF")));
    sock.on("error", (e) => this.finish(e));
  }

  static async dial(socket: string): Promise<RawConn> {
    return new RawConn(await dial(socket));
  }

  private finish(err: Error): void {
    this.ended ??= err;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  close(): void {
    this.sock.destroy();
  }

  writeFrame(sid: number, type: number, flags: number, data: Uint8Array = EMPTY): void {
    if (!this.sock.destroyed) this.sock.write(encodeFrame(sid, type, flags, data));
  }

  /** Sends arbitrary bytes; resolves once they are handed to the kernel. */
  writeRawBytes(b: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      this.sock.write(b, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** The next frame; rejects with NoFrame if none arrives in time. */
  async readFrame(timeoutMs: number): Promise<RawFrame> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (this.head < this.frames.length) {
        const f = this.frames[this.head]!;
        this.frames[this.head++] = ZERO_FRAME;
        if (this.head === this.frames.length) {
          this.frames.length = 0;
          this.head = 0;
        }
        return f;
      }
      if (this.ended !== undefined) throw this.ended;
      const left = deadline - performance.now();
      if (left <= 0) throw new NoFrame();
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Reads frames until one for stream sid arrives, counting and dropping the others. */
  async readFrameOn(sid: number, timeoutMs: number): Promise<{ frame: RawFrame; skipped: number; err: Error | undefined }> {
    const deadline = performance.now() + timeoutMs;
    let skipped = 0;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) return { frame: ZERO_FRAME, skipped, err: new NoFrame() };
      let f: RawFrame;
      try {
        f = await this.readFrame(left);
      } catch (e) {
        return { frame: ZERO_FRAME, skipped, err: e as Error };
      }
      if (f.streamId === sid) return { frame: f, skipped, err: undefined };
      skipped++;
    }
  }
}

interface WireResponse {
  readonly hasStatus: boolean;
  readonly code: number;
  readonly message: string;
  readonly payload: Uint8Array;
}

function decodeWire(data: Uint8Array): WireResponse {
  const r = decodeResponse(data);
  const st = r.status;
  return { hasStatus: st !== undefined, code: st?.code ?? 0, message: st?.message ?? "", payload: r.payload };
}

function tryDecodeWire(data: Uint8Array): [WireResponse, Error | undefined] {
  try {
    return [decodeWire(data), undefined];
  } catch (e) {
    return [{ hasStatus: false, code: 0, message: "", payload: EMPTY }, e as Error];
  }
}

function wireString(w: WireResponse): string {
  const st = w.hasStatus ? `status{code=${w.code} message=${goQuote(w.message)}}` : "no status field";
  return `${st} payload=${w.payload.length} bytes`;
}


function wantFrameStatus(f: RawFrame, sid: number, code: number, msg: string, msgPrefix: boolean): [boolean, string] {
  if (f.type !== MessageType.Response || f.streamId !== sid) {
    return [false, `want response on stream ${sid}, got ${frameString(f)}`];
  }
  const [w, err] = tryDecodeWire(f.data);
  if (err !== undefined) return [false, `${frameString(f)}: undecodable response: ${err.message}`];
  let ok = w.hasStatus && w.code === code;
  ok = ok && (msgPrefix ? w.message.startsWith(msg) : w.message === msg);
  return [ok, `${frameString(f)} ${wireString(w)}`];
}

function wireRequest(method: string, payload: Uint8Array = EMPTY, timeoutNano = 0): Uint8Array {
  return encodeRequest({ service: SERVICE, method, payload, timeoutNano, metadata: [] });
}

/** Undefined when nothing arrives for 300 ms, as it must; else what came instead. */
async function unanswered(rc: RawConn): Promise<string | undefined> {
  const o = await attempt(rc.readFrame(300));
  if (!o.ok && o.err instanceof NoFrame) return undefined;
  return `expected silence, got ${frameString(o.ok ? o.value : ZERO_FRAME)} err=${o.ok ? "<nil>" : (o.err as Error).message}`;
}

/** Sends Echo on sid and expects the matching OK response. */
async function rawEcho(rc: RawConn, sid: number, payload: string): Promise<[boolean, string]> {
  rc.writeFrame(sid, MessageType.Request, 0, wireRequest("Echo", bytes(payload)));
  const { frame: f, skipped, err } = await rc.readFrameOn(sid, 5000);
  if (err !== undefined) return [false, `echo on stream ${sid}: ${err.message} (skipped ${skipped} frames)`];
  const [w, derr] = tryDecodeWire(f.data);
  if (derr !== undefined || f.type !== MessageType.Response || (w.hasStatus && w.code !== 0) || text(w.payload) !== payload) {
    return [false, `echo on stream ${sid}: ${frameString(f)} ${wireString(w)} err=${derr?.message ?? "<nil>"}`];
  }
  if (skipped > 0) return [true, `echo on stream ${sid} answered (after ${skipped} frames of other streams)`];
  return [true, `echo on stream ${sid} answered`];
}

// ---------------------------------------------------------------------------------------------
// call: the conformance sequence
// ---------------------------------------------------------------------------------------------

function describe(err: unknown): string {
  if (err === undefined) return "OK";
  if (err instanceof RpcError) return `code=${err.code} (${goCodeName(err.code)}) message=${goQuote(err.rawMessage)}`;
  return `non-status error: ${err instanceof Error ? err.message : String(err)}`;
}

/** err is a status with the code and, unless msg is "", exactly that message. */
function wantStatus(err: unknown, code: number, msg: string): [boolean, string] {
  if (!(err instanceof RpcError)) return [false, `want code=${code}, got ${describe(err)}`];
  return [err.code === code && (msg === "" || err.rawMessage === msg), describe(err)];
}

type Outcome<T> = { ok: true; value: T } | { ok: false; err: unknown };

async function attempt<T>(p: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    return { ok: false, err };
  }
}

function errOf<T>(o: Outcome<T>): unknown {
  return o.ok ? undefined : o.err;
}

function randomBytes(n: number): Uint8Array {
  const b = nodeRandomBytes(n);
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** Go's time.Duration formatting for the watchdog limits used here. */
function goDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}m${s % 60}s`;
}

/** Go's json.Encoder escapes <, > and & (and U+2028/9) in strings. */
function goJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Size of a protobuf bytes field's length prefix plus content (protowire.SizeBytes). */
function sizeBytes(n: number): number {
  return varintSize(n) + n;
}

/** An Echo payload size whose request (service, method, payload; nothing else) is exactly target bytes. */
function exactRequestPayload(target: number): number {
  const fixed = 1 + sizeBytes(bytes(SERVICE).length) + 1 + sizeBytes(4) + 1;
  let n = target - fixed;
  while (n > 0 && fixed + sizeBytes(n) !== target) n--;
  return n;
}

type Check = () => Promise<[boolean, string]>;

class Checker {
  passed = 0;
  failed = 0;

  constructor(readonly socket: string) {}

  report(name: string, pass: boolean, detail: string): void {
    if (pass) this.passed++;
    else this.failed++;
    process.stdout.write(goJson({ check: name, pass, detail }) + "\n");
  }

  summary(): void {
    process.stdout.write(goJson({ summary: true, passed: this.passed, failed: this.failed }) + "\n");
  }

  /** Runs one check under a watchdog; a hung or throwing check fails without stopping the sequence. */
  async run(name: string, limitMs: number, fn: Check): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const watchdog = new Promise<[boolean, string]>((resolve) => {
      timer = setTimeout(() => resolve([false, `no result within ${goDuration(limitMs)}`]), limitMs);
    });
    const work = (async (): Promise<[boolean, string]> => {
      try {
        return await fn();
      } catch (e) {
        return [false, `panic: ${e instanceof Error ? e.message : String(e)}`];
      }
    })();
    const [pass, detail] = await Promise.race([work, watchdog]);
    clearTimeout(timer);
    this.report(name, pass, detail);
  }

  async withRaw(name: string, limitMs: number, fn: (rc: RawConn) => Promise<[boolean, string]>): Promise<void> {
    await this.run(name, limitMs, async () => {
      let rc: RawConn;
      try {
        rc = await RawConn.dial(this.socket);
      } catch (e) {
        return [false, "dial: " + (e as Error).message];
      }
      try {
        return await fn(rc);
      } finally {
        rc.close();
      }
    });
  }

  async unaryChecks(cl: Client): Promise<void> {
    const echo = (name: string, payload: Uint8Array, timeoutMs: number | undefined): Promise<void> =>
      this.run(name, 60_000, async () => {
        const o = await attempt(cl.call(SERVICE, "Echo", payload, timeoutMs === undefined ? {} : { timeoutMs }));
        if (!o.ok) return [false, describe(o.err)];
        if (!bytesEqual(o.value, payload)) return [false, `sent ${payload.length} bytes, got ${o.value.length} different bytes`];
        return [true, `${o.value.length} bytes echoed`];
      });
    await echo("echo-0-bytes", EMPTY, 30_000);
    await echo("echo-1-byte-0x78", Uint8Array.of(0x78), 30_000);
    await echo("echo-1000-bytes", randomBytes(1000), 30_000);
    await echo("echo-1MiB", randomBytes(1 << 20), 30_000);

    // No deadline on this one: a timeout_nano field would change the size. The TS client
    // writes the payload last in the envelope; the size is the same in any field order.
    const n = exactRequestPayload(MAX_FRAME_DATA);
    const payload = randomBytes(n);
    await this.run("echo-request-frame-exactly-4MiB", 60_000, async () => {
      const size = wireRequest("Echo", payload).length;
      if (size !== MAX_FRAME_DATA) return [false, `sizing bug: request would be ${size} bytes`];
      const o = await attempt(cl.call(SERVICE, "Echo", payload));
      if (!o.ok) return [false, describe(o.err)];
      return [bytesEqual(o.value, payload), `request frame data ${size} bytes (payload ${n}) echoed intact`];
    });

    await this.run("client-local-oversize", 30_000, async () => {
      // The TS client itself refuses to send a frame over 4 MiB; nothing reaches the server.
      // Unlike Go's, its status message is the bare text, not wrapped in "rpc error: ...".
      const o = await attempt(cl.call(SERVICE, "Echo", randomBytes(n + 1)));
      const [ok, d] = wantStatus(errOf(o), Code.RESOURCE_EXHAUSTED, "message length 4194305 exceed maximum message size of 4194304");
      return [ok, "TS client, before sending: " + d];
    });

    await this.run("echo-64-concurrent", 30_000, async () => {
      const errs = await Promise.all(
        Array.from({ length: 64 }, async (_, i) => {
          const p = bytes(`caller-${String(i).padStart(2, "0")}-` + String.fromCharCode(0x61 + (i % 26)).repeat(i * 37));
          const o = await attempt(cl.call(SERVICE, "Echo", p, { timeoutMs: 20_000 }));
          if (!o.ok) return describe(o.err);
          if (!bytesEqual(o.value, p)) return `caller ${i} got another caller's answer (${o.value.length} bytes)`;
          return "";
        }),
      );
      const bad = errs.filter((e) => e !== "");
      if (bad.length > 0) return [false, bad.join("; ")];
      return [true, "64 distinct payloads, each answered to its own caller"];
    });

    // The slow call's 3 s leave the fast one (sent 5 ms later) room on a loaded machine.
    await this.run("out-of-order-completion", 20_000, async () => {
      const order: string[] = [];
      const start = performance.now();
      const calls: Promise<void>[] = [];
      for (const p of ["3000:slow", "10:fast"]) {
        calls.push(
          attempt(cl.call(SERVICE, "Sleep", bytes(p), { timeoutMs: 10_000 })).then((o) => {
            if (!o.ok) order.push("error " + describe(o.err));
            else order.push(`${text(o.value)}@${Math.trunc(performance.now() - start)}ms`);
          }),
        );
        await sleep(5); // slow one is sent first
      }
      await Promise.all(calls);
      const [first = "", second = ""] = order;
      return [first.startsWith("10:fast@") && second.startsWith("3000:slow@"), `completion order: ${first}, ${second}`];
    });
  }

  async statusChecks(cl: Client): Promise<void> {
    await this.run("fail-0-is-ok", 10_000, async () => {
      const o = await attempt(cl.call(SERVICE, "Fail", bytes("0"), { timeoutMs: 5000 }));
      const len = o.ok ? o.value.length : 0;
      return [o.ok && len === 0, `${describe(errOf(o))}, payload ${len} bytes`];
    });
    for (let code = 1; code <= 16; code++) {
      await this.run(`fail-${code}`, 10_000, async () => {
        const o = await attempt(cl.call(SERVICE, "Fail", bytes(String(code)), { timeoutMs: 5000 }));
        return wantStatus(errOf(o), code, "peer failure");
      });
    }
    for (const [name, method, payload] of [
      ["fail-bad-payload", "Fail", "x"],
      ["fail-empty-payload", "Fail", ""],
      ["sleep-bad-payload", "Sleep", "soon"],
    ] as const) {
      await this.run(name, 10_000, async () => {
        const o = await attempt(cl.call(SERVICE, method, bytes(payload), { timeoutMs: 5000 }));
        return wantStatus(errOf(o), Code.INVALID_ARGUMENT, "");
      });
    }
    await this.run("unknown-method", 10_000, async () => {
      const o = await attempt(cl.call(SERVICE, "Nope", bytes("x"), { timeoutMs: 5000 }));
      return wantStatus(errOf(o), Code.UNIMPLEMENTED, "method Nope");
    });
    await this.run("unknown-service", 10_000, async () => {
      const o = await attempt(cl.call("ttrpc.peer.v1.Missing", "Echo", bytes("x"), { timeoutMs: 5000 }));
      return wantStatus(errOf(o), Code.UNIMPLEMENTED, "service ttrpc.peer.v1.Missing");
    });
    await this.run("unknown-method-on-stream", 10_000, async () => {
      const it = cl.serverStream(SERVICE, "Nope", bytes("1"), { timeoutMs: 5000 })[Symbol.asyncIterator]();
      const o = await attempt(it.next());
      return wantStatus(errOf(o), Code.UNIMPLEMENTED, "method Nope");
    });
  }

  async deadlineChecks(cl: Client): Promise<void> {
    await this.run("client-side-deadline", 10_000, async () => {
      // No timeout_nano on the wire: only the client's own timer expires. The TS client's way
      // to do that is an AbortSignal that times out (timeoutMs would send timeout_nano); it
      // ends the call with CANCELED whose cause is the signal's TimeoutError.
      const start = performance.now();
      const o = await attempt(cl.call(SERVICE, "Sleep", bytes("1000:client-deadline"), { signal: AbortSignal.timeout(150) }));
      const el = Math.trunc(performance.now() - start);
      const err = errOf(o);
      const cause = err instanceof RpcError ? err.cause : undefined;
      const timedOut = err instanceof RpcError && err.code === Code.CANCELED && cause instanceof Error && cause.name === "TimeoutError";
      // The error says whose deadline ended it (the server would answer after 1000 ms); how long
      // that took is printed, not judged: it depends on the machine.
      return [timedOut, `after ${el}ms: ${err instanceof Error ? err.message : describe(err)}`];
    });

    await this.run("server-timeout-nano-sleep", 10_000, async () => {
      // The client waits 5 s but asks the server for 200 ms. The TS client sends as
      // timeout_nano exactly the deadline it enforces, so this request is written by hand on a
      // connection of its own.
      const rc = await RawConn.dial(this.socket);
      try {
        const start = performance.now();
        rc.writeFrame(1, MessageType.Request, 0, wireRequest("Sleep", bytes("2000:server-deadline"), 200_000_000));
        let f: RawFrame;
        try {
          f = await rc.readFrame(5000);
        } catch (e) {
          return [false, `after ${Math.trunc(performance.now() - start)}ms: ${(e as Error).message}`];
        }
        const el = Math.trunc(performance.now() - start);
        const [w, derr] = tryDecodeWire(f.data);
        if (derr !== undefined || f.type !== MessageType.Response || f.streamId !== 1) {
          return [false, `after ${el}ms: ${frameString(f)} ${wireString(w)} err=${derr?.message ?? "<nil>"}`];
        }
        const err = w.hasStatus && w.code !== 0 ? new RpcError(w.code, w.message) : undefined;
        const [ok, d] = wantStatus(err, Code.DEADLINE_EXCEEDED, "");
        // DEADLINE_EXCEEDED, not the answer the sleep would give after 2000 ms; and not before the
        // deadline could have passed (timers never fire early).
        return [ok && el >= 150, `after ${el}ms: ${d}`];
      } finally {
        rc.close();
      }
    });

    await this.run("deadline-from-timeout-nano", 10_000, async () => {
      const start = performance.now();
      const o = await attempt(cl.call(SERVICE, "Deadline", EMPTY, { timeoutMs: 2000 }));
      const el = Math.ceil(performance.now() - start);
      if (!o.ok) return [false, describe(o.err)];
      const s = text(o.value);
      const v = parseInt64(s);
      // The server's deadline is its receipt plus timeout_nano (at most 2 s): what it has left
      // lies between 2 s less this round trip and 2 s, however slow the machine.
      return [v !== undefined && v >= BigInt(2000 - el) * 1_000_000n && v <= 2_000_000_000n, `client timeout 2s, server saw ${goQuote(s)} ns left after a ${el}ms round trip`];
    });
    await this.run("deadline-none", 10_000, async () => {
      const o = await attempt(cl.call(SERVICE, "Deadline", EMPTY));
      const got = o.ok ? o.value : EMPTY;
      return [o.ok && text(got) === "none", `${describe(errOf(o))}, payload ${goQuote(got)}`];
    });
    await this.run("sleep-within-timeout", 10_000, async () => {
      const o = await attempt(cl.call(SERVICE, "Sleep", bytes("50:ok"), { timeoutMs: 5000 }));
      const got = o.ok ? o.value : EMPTY;
      return [o.ok && text(got) === "50:ok", `${describe(errOf(o))}, payload ${goQuote(got)}`];
    });
  }

  async metadataChecks(cl: Client): Promise<void> {
    await this.run("metadata-round-trip", 10_000, async () => {
      // Sent in this order (the Go client sends its map in random order); the answer must be
      // sorted by key and keep "multi"'s values in order.
      const md: KeyValue[] = [
        { key: "zeta", value: "last" },
        { key: "multi", value: "first" },
        { key: "alpha", value: "1" },
        { key: "multi", value: "second" },
        { key: "beta", value: "" },
      ];
      const o = await attempt(cl.call(SERVICE, "Metadata", EMPTY, { timeoutMs: 5000, metadata: md }));
      if (!o.ok) return [false, describe(o.err)];
      let list: KeyValue[];
      try {
        list = decodeKVList(o.value);
      } catch (e) {
        return [false, "undecodable: " + (e as Error).message];
      }
      const want: KeyValue[] = [
        { key: "alpha", value: "1" },
        { key: "beta", value: "" },
        { key: "multi", value: "first" },
        { key: "multi", value: "second" },
        { key: "zeta", value: "last" },
      ];
      return [kvString(list) === kvString(want), `got ${kvString(list)}`];
    });
    await this.run("metadata-none", 10_000, async () => {
      const o = await attempt(cl.call(SERVICE, "Metadata", EMPTY, { timeoutMs: 5000 }));
      const len = o.ok ? o.value.length : 0;
      return [o.ok && len === 0, `${describe(errOf(o))}, payload ${len} bytes`];
    });
  }

  async streamChecks(cl: Client): Promise<void> {
    for (const n of [0, 5, 1000]) {
      await this.run(`count-${n}`, 20_000, async () => {
        const it = cl.serverStream(SERVICE, "Count", bytes(String(n)), { timeoutMs: 15_000 })[Symbol.asyncIterator]();
        for (let i = 0; ; i++) {
          const o = await attempt(it.next());
          if (!o.ok) return [false, `after ${i} messages: ${describe(o.err)}`];
          if (o.value.done === true) return [i === n, `${i} messages then end of stream`];
          if (text(o.value.value) !== String(i)) return [false, `message ${i} is ${goQuote(o.value.value)}`];
        }
      });
    }
    await this.run("count-bad-payload", 10_000, async () => {
      const it = cl.serverStream(SERVICE, "Count", bytes("many"), { timeoutMs: 5000 })[Symbol.asyncIterator]();
      return wantStatus(errOf(await attempt(it.next())), Code.INVALID_ARGUMENT, "");
    });

    const sum = (name: string, items: readonly string[], want: string): Promise<void> =>
      this.run(name, 10_000, async () => {
        async function* input(): AsyncGenerator<Uint8Array> {
          for (const it of items) yield bytes(it);
        }
        const o = await attempt(cl.clientStream(SERVICE, "Sum", input(), { timeoutMs: 5000 }));
        if (!o.ok) return [false, describe(o.err)];
        return [text(o.value) === want, `sum of [${items.join(" ")}] = ${goQuote(o.value)}`];
      });
    await sum("sum", ["1", "2", "3", "40", "-6"], "40");
    await sum("sum-none", [], "0");

    await this.run("chat", 10_000, async () => {
      const input = new Pushable();
      const out = cl.bidiStream(SERVICE, "Chat", input, { timeoutMs: 5000 })[Symbol.asyncIterator]();
      for (let i = 0; i < 10; i++) {
        const p = i === 3 ? EMPTY : bytes(`line ${i}`); // an empty message is still a message
        input.push(p);
        const o = await attempt(out.next());
        if (!o.ok) return [false, `reply ${i}: ${describe(o.err)}`];
        if (o.value.done === true) return [false, `reply ${i}: ${describe(undefined)} (end of stream)`];
        if (!bytesEqual(o.value.value, p)) return [false, `reply ${i} is ${goQuote(o.value.value)}`];
      }
      input.close();
      const o = await attempt(out.next());
      const eof = o.ok && o.value.done === true;
      const after = eof ? "EOF" : o.ok ? `message ${goQuote(o.value.value ?? EMPTY)}` : describe(o.err);
      return [eof, `10 messages echoed, after CloseSend: ${after}`];
    });

    await this.run("chat-cancel-mid-stream", 15_000, async () => {
      const ac = new AbortController();
      const input = new Pushable();
      const out = cl.bidiStream(SERVICE, "Chat", input, { signal: ac.signal })[Symbol.asyncIterator]();
      input.push(bytes("before cancel"));
      const first = await attempt(out.next());
      if (!first.ok || first.value.done === true || text(first.value.value) !== "before cancel") {
        ac.abort();
        const got = first.ok && first.value.done !== true ? first.value.value : EMPTY;
        return [false, `first reply: ${goQuote(got)} ${describe(errOf(first))}`];
      }
      // The TS client ends the call locally and closes its side of the stream (a data frame
      // flagged remote-closed | no-data): ttrpc has no cancel frame.
      ac.abort();
      const after = await attempt(out.next());
      const rerr = errOf(after);
      if (!(rerr instanceof RpcError && rerr.code === Code.CANCELED)) {
        return [false, `next() after cancel: ${after.ok ? "a message or end of stream" : describe(rerr)}`];
      }
      const e = await attempt(cl.call(SERVICE, "Echo", bytes("after cancel"), { timeoutMs: 5000 }));
      if (!e.ok || text(e.value) !== "after cancel") {
        return [false, "echo on same connection after cancel: " + describe(errOf(e))];
      }
      let n = 0;
      try {
        for await (const _ of cl.serverStream(SERVICE, "Count", bytes("3"), { timeoutMs: 5000 })) n++;
      } catch (err) {
        return [false, "count after cancel: " + describe(err)];
      }
      return [n === 3, `next() after cancel: ${describe(rerr)}; Echo and Count 3 on the same connection still work`];
    });

    await this.run("count-early-close", 20_000, async () => {
      // As the Go twin: a connection of its own, closed after 3 messages (the only cancel that
      // reaches the server). The TS client could also abandon the stream on a shared
      // connection, but then the server would go on sending all of it.
      let cl2: Client;
      try {
        cl2 = new Client(await dial(this.socket));
      } catch (e) {
        return [false, (e as Error).message];
      }
      const ac = new AbortController();
      const it = cl2.serverStream(SERVICE, "Count", bytes("100000"), { signal: ac.signal })[Symbol.asyncIterator]();
      for (let i = 0; i < 3; i++) {
        const o = await attempt(it.next());
        if (!o.ok || o.value.done === true || text(o.value.value) !== String(i)) {
          ac.abort();
          cl2.close();
          const got = o.ok && o.value.done !== true ? o.value.value : EMPTY;
          return [false, `message ${i}: ${goQuote(got)} ${describe(errOf(o))}`];
        }
      }
      ac.abort();
      await it.return?.();
      cl2.close();
      const e = await attempt(cl.call(SERVICE, "Echo", bytes("after early close"), { timeoutMs: 5000 }));
      if (!e.ok || text(e.value) !== "after early close") return [false, "echo on main connection: " + describe(errOf(e))];
      return [true, "read 3 of 100000, cancelled and closed that connection; server keeps serving"];
    });
  }

  async rawChecks(): Promise<void> {
    const req = (method: string, payload: string): Uint8Array => wireRequest(method, bytes(payload));
    const R = MessageType.Request;
    const D = MessageType.Data;

    await this.withRaw("raw-unary-ok-frame", 10_000, async (rc) => {
      rc.writeFrame(1, R, 0, req("Echo", "abc"));
      const f = await rc.readFrame(5000);
      const [w, derr] = tryDecodeWire(f.data);
      const ok =
        derr === undefined && f.streamId === 1 && f.type === MessageType.Response && f.flags === 0 && !w.hasStatus && text(w.payload) === "abc";
      return [ok, `${frameString(f)} data=${hex(f.data)}: ${wireString(w)}`];
    });

    await this.withRaw("raw-unary-error-frame", 10_000, async (rc) => {
      rc.writeFrame(1, R, 0, req("Fail", "9"));
      const f = await rc.readFrame(5000);
      const [ok, d] = wantFrameStatus(f, 1, 9, "peer failure", false);
      const [w] = tryDecodeWire(f.data);
      return [ok && f.flags === 0 && w.payload.length === 0, `${d} data=${hex(f.data)}`];
    });

    await this.withRaw("raw-oversize-request", 60_000, async (rc) => {
      const b = new Uint8Array(10 + MAX_FRAME_DATA + 1);
      b.set(encodeFrame(1, R, 0).subarray(0, 10));
      new DataView(b.buffer).setUint32(0, MAX_FRAME_DATA + 1);
      const wrote = attempt(rc.writeRawBytes(b));
      let f: RawFrame;
      try {
        f = await rc.readFrame(30_000);
      } catch (e) {
        return [false, "no answer: " + (e as Error).message];
      }
      const w = await wrote;
      if (!w.ok) return [false, "write: " + (w.err as Error).message];
      const [ok, d] = wantFrameStatus(f, 1, Code.RESOURCE_EXHAUSTED, "message length 4194305 exceed maximum message size of 4194304", false);
      const [eok, ed] = await rawEcho(rc, 3, "after oversize");
      return [ok && eok, `${d}; ${ed}`];
    });

    await this.withRaw("raw-even-stream-id", 10_000, async (rc) => {
      rc.writeFrame(2, R, 0, req("Echo", "even"));
      const f = await rc.readFrame(5000);
      const [ok, d] = wantFrameStatus(f, 2, Code.INVALID_ARGUMENT, "StreamID must be odd for client initiated streams", false);
      const [eok, ed] = await rawEcho(rc, 1, "after even");
      return [ok && eok, `${d}; ${ed}`];
    });

    await this.withRaw("raw-unknown-frame-type", 10_000, async (rc) => {
      rc.writeFrame(1, 0x7f, 0, bytes("mystery"));
      const noise = await unanswered(rc);
      if (noise !== undefined) return [false, noise];
      const [eok, ed] = await rawEcho(rc, 3, "after unknown type");
      return [eok, "type 0x7f on odd stream 1: no answer, ignored; " + ed];
    });

    await this.withRaw("raw-unknown-frame-type-even-id", 10_000, async (rc) => {
      // The parity check runs before the type is looked at.
      rc.writeFrame(2, 0x7f, 0, bytes("mystery"));
      const f = await rc.readFrame(5000);
      const [ok, d] = wantFrameStatus(f, 2, Code.INVALID_ARGUMENT, "StreamID must be odd for client initiated streams", false);
      const [eok, ed] = await rawEcho(rc, 1, "after unknown even");
      return [ok && eok, `${d}; ${ed}`];
    });

    await this.withRaw("raw-undecodable-request", 10_000, async (rc) => {
      rc.writeFrame(1, R, 0, Uint8Array.of(0xff, 0xff, 0xff));
      const f = await rc.readFrame(5000);
      const [ok, d] = wantFrameStatus(f, 1, Code.INVALID_ARGUMENT, "unmarshal request error: ", true);
      // The failed request still consumed stream id 1.
      const [eok, ed] = await rawEcho(rc, 3, "after garbage");
      return [ok && eok, `${d}; ${ed}`];
    });

    await this.withRaw("raw-empty-request", 10_000, async (rc) => {
      rc.writeFrame(1, R, 0, EMPTY);
      const f = await rc.readFrame(5000);
      return wantFrameStatus(f, 1, Code.UNIMPLEMENTED, "service ", false);
    });

    await this.withRaw("raw-stream-id-reuse", 10_000, async (rc) => {
      const details: string[] = [];
      let ok = true;
      const [e1, d1] = await rawEcho(rc, 5, "first");
      details.push(d1);
      ok = ok && e1;
      for (const sid of [5, 3]) {
        rc.writeFrame(sid, R, 0, req("Echo", "again"));
        const f = await rc.readFrame(5000);
        const [fok, d] = wantFrameStatus(f, sid, Code.INVALID_ARGUMENT, "StreamID cannot be re-used and must increment", false);
        ok = ok && fok;
        details.push(d);
      }
      const [e2, d2] = await rawEcho(rc, 7, "next");
      details.push(d2);
      return [ok && e2, details.join("; ")];
    });

    await this.withRaw("raw-count-frames", 10_000, async (rc) => {
      rc.writeFrame(1, R, Flag.RemoteClosed, req("Count", "2"));
      const got: string[] = [];
      let ok = true;
      const want = [
        { flags: 0, data: "0" },
        { flags: 0, data: "1" },
        { flags: Flag.RemoteClosed | Flag.NoData, data: "" },
      ];
      for (const w of want) {
        let f: RawFrame;
        try {
          f = await rc.readFrame(5000);
        } catch (e) {
          return [false, got.join(", ") + ": " + (e as Error).message];
        }
        got.push(`${frameString(f)} ${goQuote(f.data)}`);
        ok = ok && f.streamId === 1 && f.type === D && f.flags === w.flags && text(f.data) === w.data;
      }
      const extra = await attempt(rc.readFrame(200));
      if (extra.ok || !(extra.err instanceof NoFrame)) {
        return [false, `unexpected extra ${frameString(extra.ok ? extra.value : ZERO_FRAME)} err=${extra.ok ? "<nil>" : (extra.err as Error).message}`];
      }
      return [ok, got.join(", ")];
    });

    await this.withRaw("raw-sum-frames", 10_000, async (rc) => {
      rc.writeFrame(1, R, Flag.RemoteOpen, wireRequest("Sum"));
      rc.writeFrame(1, D, 0, bytes("1"));
      rc.writeFrame(1, D, 0, bytes("2"));
      rc.writeFrame(1, D, Flag.RemoteClosed | Flag.NoData, EMPTY);
      const f = await rc.readFrame(5000);
      const [w, derr] = tryDecodeWire(f.data);
      const ok =
        derr === undefined && f.streamId === 1 && f.type === MessageType.Response && f.flags === 0 && !w.hasStatus && text(w.payload) === "3";
      return [ok, `${frameString(f)} ${wireString(w)} payload=${goQuote(w.payload)}`];
    });

    await this.withRaw("raw-chat-frames", 10_000, async (rc) => {
      rc.writeFrame(1, R, Flag.RemoteOpen, wireRequest("Chat"));
      rc.writeFrame(1, D, 0, bytes("hi"));
      const f1 = await rc.readFrame(5000);
      rc.writeFrame(1, D, Flag.RemoteClosed | Flag.NoData, EMPTY);
      const f2 = await rc.readFrame(5000);
      const ok =
        f1.type === D && f1.flags === 0 && text(f1.data) === "hi" && f2.type === D && f2.flags === (Flag.RemoteClosed | Flag.NoData) && f2.length === 0;
      return [ok, `${frameString(f1)} ${goQuote(f1.data)}, then after client close ${frameString(f2)}`];
    });

    await this.withRaw("raw-sum-request-payload-is-first-item", 10_000, async (rc) => {
      // A payload in the Request of a client-streaming call is handed to the handler as its
      // first message.
      rc.writeFrame(1, R, Flag.RemoteOpen, req("Sum", "7"));
      rc.writeFrame(1, D, 0, bytes("1"));
      rc.writeFrame(1, D, Flag.RemoteClosed | Flag.NoData, EMPTY);
      const f = await rc.readFrame(5000);
      const [w, derr] = tryDecodeWire(f.data);
      const ok = derr === undefined && f.type === MessageType.Response && !w.hasStatus && text(w.payload) === "8";
      return [ok, `request payload "7" + data "1": ${frameString(f)} ${wireString(w)} payload=${goQuote(w.payload)}`];
    });

    await this.withRaw("raw-chat-empty-data-vs-no-data-flag", 20_000, async (rc) => {
      // A zero-length data frame is an (empty) message; one flagged no-data without
      // remote-closed is dropped.
      rc.writeFrame(1, R, Flag.RemoteOpen, wireRequest("Chat"));
      rc.writeFrame(1, D, 0, EMPTY);
      rc.writeFrame(1, D, Flag.NoData, EMPTY);
      rc.writeFrame(1, D, Flag.RemoteClosed | Flag.NoData, EMPTY);
      // The answers up to the one flagged remote-closed, however slowly they come; then a short
      // wait for anything after it.
      const frames: RawFrame[] = [];
      for (let closed = false; !closed && frames.length <= 2; ) {
        const o = await attempt(rc.readFrame(5000));
        if (!o.ok) {
          if (o.err instanceof NoFrame) break;
          return [false, (o.err as Error).message];
        }
        frames.push(o.value);
        closed = (o.value.flags & Flag.RemoteClosed) !== 0;
      }
      const after = await attempt(rc.readFrame(500));
      if (after.ok) frames.push(after.value);
      else if (!(after.err instanceof NoFrame)) return [false, (after.err as Error).message];
      const [a, b] = frames;
      const ok =
        frames.length === 2 &&
        a !== undefined &&
        b !== undefined &&
        a.type === D &&
        a.flags === 0 &&
        a.length === 0 &&
        b.type === D &&
        b.flags === (Flag.RemoteClosed | Flag.NoData) &&
        b.length === 0;
      return [ok, frames.map(frameString).join(", ")];
    });

    await this.withRaw("raw-client-response-frame-ignored", 10_000, async (rc) => {
      rc.writeFrame(1, MessageType.Response, 0, Uint8Array.of(0x12, 0x01, 0x78));
      const noise = await unanswered(rc);
      if (noise !== undefined) return [false, noise];
      const [eok, ed] = await rawEcho(rc, 3, "after response frame");
      return [eok, "response-type frame from the client: no answer; " + ed];
    });

    await this.withRaw("raw-unary-request-flags-ignored", 10_000, async (rc) => {
      rc.writeFrame(1, R, Flag.RemoteOpen, req("Echo", "ro"));
      const f = await rc.readFrame(5000);
      const [w, derr] = tryDecodeWire(f.data);
      const ok = derr === undefined && f.type === MessageType.Response && !w.hasStatus && text(w.payload) === "ro";
      return [ok, `unary request flagged remote-open: ${frameString(f)} ${wireString(w)}`];
    });

    await this.withRaw("raw-sum-bad-item", 10_000, async (rc) => {
      rc.writeFrame(1, R, Flag.RemoteOpen, wireRequest("Sum"));
      rc.writeFrame(1, D, 0, bytes("seven"));
      const f = await rc.readFrame(5000);
      // Nothing more is sent on stream 1 now: the reference server has forgotten it.
      const [ok, d] = wantFrameStatus(f, 1, Code.INVALID_ARGUMENT, "", true);
      const [eok, ed] = await rawEcho(rc, 3, "after bad item");
      return [ok && eok, `${d}; ${ed}`];
    });

    await this.withRaw("raw-count-abandoned", 20_000, async (rc) => {
      rc.writeFrame(1, R, Flag.RemoteClosed, req("Count", "100000"));
      for (let i = 0; i < 3; i++) {
        const o = await attempt(rc.readFrame(5000));
        if (!o.ok || o.value.streamId !== 1 || text(o.value.data) !== String(i)) {
          const f = o.ok ? o.value : ZERO_FRAME;
          return [false, `message ${i}: ${frameString(f)} ${goQuote(f.data)} err=${o.ok ? "<nil>" : (o.err as Error).message}`];
        }
      }
      // The client goes quiet on stream 1 (ttrpc cannot cancel it) and asks something else on
      // the same connection.
      const [eok, ed] = await rawEcho(rc, 3, "while count runs");
      return [eok, "read 3 of Count 100000, then " + ed];
    });
  }
}

async function runCall(args: readonly string[]): Promise<number> {
  const socket = socketFlag(args, "call");
  if (socket === undefined) return 2;
  const c = new Checker(socket);
  let cl: Client;
  try {
    cl = new Client(await dial(socket));
  } catch (e) {
    c.report("connect", false, (e as Error).message);
    c.summary();
    return 1;
  }
  try {
    await c.unaryChecks(cl);
    await c.statusChecks(cl);
    await c.deadlineChecks(cl);
    await c.metadataChecks(cl);
    await c.streamChecks(cl);
    await c.rawChecks();
    await c.run("connection-still-usable", 10_000, async () => {
      const o = await attempt(cl.call(SERVICE, "Echo", bytes("still here"), { timeoutMs: 5000 }));
      return [o.ok && text(o.value) === "still here", `main connection after all checks: ${describe(errOf(o))}`];
    });
  } finally {
    cl.close();
  }
  c.summary();
  return c.failed > 0 ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// bench
// ---------------------------------------------------------------------------------------------

async function runBench(args: readonly string[]): Promise<number> {
  const usage = (): number => {
    process.stderr.write("usage: ts-peer bench --socket PATH --conc N --size B --duration S\n");
    return 2;
  };
  const flags = parseFlags(args, ["socket", "conc", "size", "duration"]);
  if (typeof flags === "string") {
    process.stderr.write(flags + "\n");
    return usage();
  }
  const socket = flags.get("socket") ?? "";
  const conc = Number(flags.get("conc") ?? "1");
  const size = Number(flags.get("size") ?? "100");
  const dur = Number(flags.get("duration") ?? "3");
  if (socket === "" || !Number.isInteger(conc) || conc < 1 || !Number.isInteger(size) || size < 0 || !(dur > 0)) return usage();

  let client: Client;
  try {
    client = new Client(await dial(socket));
  } catch (e) {
    process.stderr.write(`dial: ${(e as Error).message}\n`);
    return 1;
  }
  const payload = new Uint8Array(size).fill(0x62);
  const lat: number[] = [];
  let failure: unknown;
  const start = performance.now();
  const stop = start + dur * 1000;
  const worker = async (): Promise<void> => {
    while (failure === undefined && performance.now() < stop) {
      const t0 = performance.now();
      let resp: Uint8Array;
      try {
        resp = await client.call(SERVICE, "Echo", payload);
      } catch (e) {
        failure ??= e;
        return;
      }
      if (resp.length !== payload.length) {
        failure ??= new Error(`echo returned ${resp.length} bytes, sent ${payload.length}`);
        return;
      }
      lat.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: conc }, worker));
  const elapsed = (performance.now() - start) / 1000;
  client.close();
  if (failure !== undefined) {
    process.stderr.write(`bench: ${failure instanceof Error ? failure.message : String(failure)}\n`);
    return 1;
  }
  if (lat.length === 0) {
    process.stderr.write("bench: no call completed\n");
    return 1;
  }
  const sorted = Float64Array.from(lat).sort();
  const pct = (p: number): number => sorted[Math.trunc(p * (sorted.length - 1))]! * 1000; // ms -> us
  const round1 = (v: number): number => Math.trunc(v * 10) / 10;
  process.stdout.write(
    JSON.stringify({ rps: round1(sorted.length / elapsed), p50_us: round1(pct(0.5)), p99_us: round1(pct(0.99)), conc, size }) + "\n",
  );
  return 0;
}

// ---------------------------------------------------------------------------------------------

async function main(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "serve":
      return runServe(rest);
    case "call":
      return runCall(rest);
    case "bench":
      return runBench(rest);
    case undefined:
      process.stderr.write("usage: ts-peer serve|call|bench --socket PATH [...]\n");
      return 2;
    default:
      process.stderr.write(`unknown subcommand ${JSON.stringify(sub)}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (rc) => process.exit(rc),
  (e: unknown) => {
    process.stderr.write(`ts-peer: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
