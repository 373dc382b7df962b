import { type DescMessage, type DescMethod, type JsonValue, fromBinary, toJson } from "@bufbuild/protobuf";
import { file_v1alpha1_api } from "../../gen/v1alpha1/api_pb.js";
import { file_v1beta1_api } from "../../gen/v1beta1/api_pb.js";
import type { EventCalls } from "../api/revision.js";
import { type Revision, fromStateChange, methodEvents, serviceRevision } from "../translate/index.js";
import { type KeyValue, decodeRequest, decodeResponse } from "../ttrpc/envelope.js";
import { codeName } from "../ttrpc/status.js";
import { type FramingError, FrameScanner, type ScannedFrame, TrunkScanner } from "./tolerant-framing.js";

/** Which way bytes went: written by the plugin (`p2r`, it dials) or by the runtime (`r2p`). */
export type Direction = "p2r" | "r2p";

/**
 * How a call travels across NRI releases: `dedicated` for the nine event calls that only NRI
 * v0.12 and later have, `statechange` for `Plugin.StateChange` (NRI v0.11 and earlier, kept by
 * newer runtimes as the fallback), `common` for every call both share.
 */
export type CallKind = EventCalls | "common";

/** Names of the ttrpc frame types. */
export type FrameTypeName = "request" | "response" | "data";

/**
 * One line of a decoded session: a ttrpc message, or damage found in the bytes (`error`, with
 * the offset and the bytes `skipped`). A message whose payload does not decode carries both its
 * frame fields and an `error`. Times are those of the read that completed the message.
 */
export interface SessionRecord {
  /** Nanoseconds since the capture started. */
  t_ns: number;
  /** Wall-clock time of that read (RFC 3339, nanoseconds), when the capture has it. */
  time?: string;
  dir: Direction;
  /** Offset in the direction's bytes of the ttrpc frame (or of the damage). */
  offset: number;
  /** Mux conn id: 1 carries the plugin's service, 2 the runtime's. */
  conn?: number;
  /** ttrpc stream id. */
  stream?: number;
  type?: FrameTypeName;
  flags?: number;
  /** Bytes of ttrpc data (the envelope). */
  length?: number;
  service?: string;
  method?: string;
  revision?: Revision;
  calls?: CallKind;
  timeoutNano?: number;
  metadata?: KeyValue[];
  status?: { code: number; name: string; message: string };
  /** Full protobuf name of the payload's message type. */
  payloadType?: string;
  /** The payload as protobuf JSON. */
  payload?: JsonValue;
  /** The payload's bytes, when they could not be decoded with a known type. */
  payloadHex?: string;
  /** For StateChange traffic: the dedicated Plugin method the event translates to. */
  translatesTo?: string;
  error?: string;
  /** Bytes skipped to get past damage. */
  skipped?: number;
}

/** Options of a SessionDecoder. */
export interface SessionDecoderOptions {
  /** Largest ttrpc data accepted (default 4 MiB, the reference limit). */
  maxDataLength?: number;
  /**
   * Each direction's bytes in full, when known in advance (a capture on disk): lets the mux
   * layer check every frame against the one after it, so a damaged length is caught at once.
   * What is pushed must be these bytes from offset 0, in order.
   */
  whole?: Record<Direction, Uint8Array>;
}

/** Every NRI method of both revisions, by `service/method`. */
const methods: ReadonlyMap<string, DescMethod> = new Map(
  [file_v1alpha1_api, file_v1beta1_api].flatMap((f) => f.services.flatMap((s) => s.methods.map((m) => [`${s.typeName}/${m.name}`, m] as const))),
);

const TYPE_NAMES: Readonly<Record<number, FrameTypeName>> = { 1: "request", 2: "response", 3: "data" };

/** A call's `calls` (dedicated, statechange or common), by its method name. */
function callKindOf(service: string, method: string): CallKind {
  if (!service.endsWith(".Plugin")) return "common";
  if (method === "StateChange") return "statechange";
  return methodEvents.has(method) ? "dedicated" : "common";
}

/** What a request stream of one conn is about, kept until its response. */
interface OpenCall {
  service: string;
  method: string;
  translatesTo?: string;
}

/** The frame layer of one direction: a mux scanner feeding one frame scanner per conn. */
interface DirectionState {
  trunk: TrunkScanner;
  conns: Map<number, FrameScanner>;
}

/**
 * Decodes a recorded (or proxied) NRI session, both directions of one plugin's connection, into
 * SessionRecords. Sans-IO: push each read of either direction in the order they happened, then
 * end each direction. Damage never stops it: bad bytes become records with their offset and the
 * decoder goes on from the next frame that makes sense. Responses are matched to their requests
 * by stream id per conn, which gives them their method and payload type.
 */
export class SessionDecoder {
  private readonly dirs = new Map<Direction, DirectionState>();
  private readonly calls = new Map<string, OpenCall>();
  private out: SessionRecord[] = [];
  private tNs = 0;
  private time: string | undefined;

  constructor(private readonly options: SessionDecoderOptions = {}) {}

  /** The records completed by one read of `dir`, at `tNs` since the start (wall clock `time`). */
  push(dir: Direction, chunk: Uint8Array, tNs: number, time?: string): SessionRecord[] {
    this.at(tNs, time);
    this.state(dir).trunk.push(chunk);
    return this.take();
  }

  /** The end of `dir`'s bytes: reports frames it cut short and damage still being skipped. */
  end(dir: Direction, tNs: number, time?: string): SessionRecord[] {
    this.at(tNs, time);
    const s = this.state(dir);
    s.trunk.end();
    for (const conn of [...s.conns.keys()].sort()) s.conns.get(conn)!.end();
    return this.take();
  }

  private at(tNs: number, time: string | undefined): void {
    this.tNs = tNs;
    this.time = time;
  }

  private take(): SessionRecord[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private base(dir: Direction, offset: number): SessionRecord {
    return this.time === undefined ? { t_ns: this.tNs, dir, offset } : { t_ns: this.tNs, time: this.time, dir, offset };
  }

  private state(dir: Direction): DirectionState {
    let s = this.dirs.get(dir);
    if (s !== undefined) return s;
    const conns = new Map<number, FrameScanner>();
    const connWhole = this.options.whole === undefined ? undefined : demux(this.options.whole[dir], this.options.maxDataLength);
    const onError = (conn: number | undefined) => (e: FramingError) => {
      const r = this.base(dir, e.offset);
      if (conn !== undefined) r.conn = conn;
      r.error = e.message;
      r.skipped = e.skipped;
      this.out.push(r);
    };
    const trunk = new TrunkScanner({
      data: (connId, bytes, offset) => {
        let fs = conns.get(connId);
        if (fs === undefined) {
          fs = new FrameScanner(
            connId,
            { validate, frame: (f) => this.frame(dir, connId, f), error: onError(connId) },
            this.options.maxDataLength,
            connWhole?.get(connId),
          );
          conns.set(connId, fs);
        }
        fs.push(bytes, offset);
      },
      error: onError(undefined),
    }, undefined, this.options.whole?.[dir]);
    s = { trunk, conns };
    this.dirs.set(dir, s);
    return s;
  }

  private frame(dir: Direction, conn: number, f: ScannedFrame): void {
    const r = this.base(dir, f.offset);
    r.conn = conn;
    r.stream = f.streamId;
    r.type = TYPE_NAMES[f.type]!;
    r.flags = f.flags;
    r.length = f.body.length;
    const key = `${conn}/${f.streamId}`;
    if (f.type === 1) {
      const req = decodeRequest(f.body);
      const call: OpenCall = { service: req.service, method: req.method };
      this.describe(r, call);
      if (req.timeoutNano !== 0) r.timeoutNano = req.timeoutNano;
      if (req.metadata.length > 0) r.metadata = [...req.metadata];
      const desc = methods.get(`${req.service}/${req.method}`);
      if (req.method === "StateChange" && desc !== undefined) {
        try {
          call.translatesTo = fromStateChange(req.payload).method;
          r.translatesTo = call.translatesTo;
        } catch (e) {
          r.error = (e as Error).message;
        }
      }
      this.payload(r, desc?.input, req.payload);
      this.calls.set(key, call);
    } else if (f.type === 2) {
      const res = decodeResponse(f.body);
      const call = this.calls.get(key);
      this.calls.delete(key);
      if (call === undefined) r.error = `ttrpc: response on conn ${conn} stream ${f.streamId} answers no request seen`;
      else {
        this.describe(r, call);
        if (call.translatesTo !== undefined) r.translatesTo = call.translatesTo;
      }
      if (res.status !== undefined && res.status.code !== 0) {
        r.status = { code: res.status.code, name: codeName(res.status.code), message: res.status.message };
      }
      // A failed call carries no payload; an empty one on success is the empty message.
      if (r.status === undefined || res.payload.length > 0) {
        const desc = call === undefined ? undefined : methods.get(`${call.service}/${call.method}`);
        this.payload(r, desc?.output, res.payload);
      }
    } else {
      const call = this.calls.get(key);
      if (call !== undefined) this.describe(r, call);
      if (f.body.length > 0) r.payloadHex = Buffer.from(f.body).toString("hex");
    }
    this.out.push(r);
  }

  private describe(r: SessionRecord, call: OpenCall): void {
    r.service = call.service;
    r.method = call.method;
    const revision = serviceRevision(call.service);
    if (revision !== undefined) {
      r.revision = revision;
      r.calls = callKindOf(call.service, call.method);
    }
  }

  private payload(r: SessionRecord, schema: DescMessage | undefined, bytes: Uint8Array): void {
    if (schema === undefined) {
      if (bytes.length > 0) r.payloadHex = Buffer.from(bytes).toString("hex");
      return;
    }
    r.payloadType = schema.typeName;
    try {
      r.payload = toJson(schema, fromBinary(schema, bytes));
    } catch (e) {
      r.payloadHex = Buffer.from(bytes).toString("hex");
      const why = `payload: invalid ${schema.typeName}: ${(e as Error).message}`;
      r.error = r.error === undefined ? why : `${r.error}; ${why}`;
    }
  }
}

/**
 * Each conn's bytes of a whole direction, split exactly as the decoder will split them when the
 * same bytes are pushed (the mux scanner's choices depend only on the whole bytes).
 */
function demux(whole: Uint8Array, maxDataLength: number | undefined): Map<number, Uint8Array> {
  const parts = new Map<number, Uint8Array[]>();
  const trunk = new TrunkScanner({ data: (conn, bytes) => parts.set(conn, [...(parts.get(conn) ?? []), bytes.slice()]), error: () => {} }, undefined, whole);
  trunk.push(whole);
  trunk.end();
  void maxDataLength;
  return new Map([...parts].map(([conn, list]) => [conn, Buffer.concat(list)]));
}

/** Whether a frame body of `type` decodes as its ttrpc envelope; the reason when it does not. */
function validate(type: number, body: Uint8Array): string | undefined {
  try {
    if (type === 1) {
      const req = decodeRequest(body);
      if (req.service === "" || req.method === "") return "request names no service or method";
    } else if (type === 2) decodeResponse(body);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
