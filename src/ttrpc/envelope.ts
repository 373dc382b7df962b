import { DecodeError } from "../wire/errors.js";
import { Reader } from "../wire/reader.js";
import { utf8Length, writeUtf8 } from "../wire/utf8.js";
import { int32Size, int64Size, varint32Size, writeInt32, writeInt64, writeVarint32 } from "../wire/writer.js";
import { ProtocolError, type StatusDetail, type StatusFields } from "./errors.js";

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/**
 * A timeout as an int64. Past ±2^53 a number is inexact, and int64 max reads back as 2^63, which
 * as two's complement would wrap to the most negative value: clamp to the int64 range instead.
 */
function int64Of(v: number): number | bigint {
  if (Number.isSafeInteger(v)) return v;
  const x = BigInt(Math.trunc(v));
  return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : x;
}

/** One metadata entry of a request; a key may repeat. */
export interface KeyValue {
  readonly key: string;
  readonly value: string;
}

/** A decoded ttrpc.Request. `payload` is a view into the frame's data. */
export interface RequestEnvelope {
  readonly service: string;
  readonly method: string;
  readonly payload: Uint8Array;
  /** Nanoseconds the caller still waits; 0 for no deadline (int64 on the wire, safe here). */
  readonly timeoutNano: number;
  readonly metadata: readonly KeyValue[];
}

/** A decoded ttrpc.Response. `status` is undefined when the response had none (success). */
export interface ResponseEnvelope {
  readonly status: StatusFields | undefined;
  readonly payload: Uint8Array;
}

const EMPTY: Uint8Array = new Uint8Array(0);
const NO_METADATA: readonly KeyValue[] = [];

/** Field sizes of an encoded Request, computed once and used to write it. */
export class RequestSizes {
  serviceLen = 0;
  methodLen = 0;
  metaLens: number[] = [];
  /** Size of everything but the payload's bytes. */
  head = 0;
  total = 0;

  measure(req: RequestEnvelope): this {
    this.serviceLen = utf8Length(req.service);
    this.methodLen = utf8Length(req.method);
    let head = 0;
    if (this.serviceLen > 0) head += 1 + varint32Size(this.serviceLen) + this.serviceLen;
    if (this.methodLen > 0) head += 1 + varint32Size(this.methodLen) + this.methodLen;
    if (req.timeoutNano !== 0) head += 1 + int64Size(int64Of(req.timeoutNano));
    this.metaLens.length = 0;
    for (const kv of req.metadata) {
      const k = utf8Length(kv.key);
      const v = utf8Length(kv.value);
      const inner = (k > 0 ? 1 + varint32Size(k) + k : 0) + (v > 0 ? 1 + varint32Size(v) + v : 0);
      this.metaLens.push(k, v, inner);
      head += 1 + varint32Size(inner) + inner;
    }
    const p = req.payload.length;
    if (p > 0) head += 1 + varint32Size(p);
    this.head = head;
    this.total = head + p;
    return this;
  }
}

/**
 * Writes a Request measured by `sizes` into `buf` at `pos`, all but the payload's bytes, which
 * go last (field order is free in protobuf; last lets a large payload be written uncopied).
 * Returns the position after what was written.
 */
export function writeRequestHead(buf: Uint8Array, pos: number, req: RequestEnvelope, sizes: RequestSizes): number {
  if (sizes.serviceLen > 0) {
    buf[pos++] = 0x0a;
    pos = writeVarint32(buf, pos, sizes.serviceLen);
    pos = writeUtf8(buf, pos, req.service, sizes.serviceLen);
  }
  if (sizes.methodLen > 0) {
    buf[pos++] = 0x12;
    pos = writeVarint32(buf, pos, sizes.methodLen);
    pos = writeUtf8(buf, pos, req.method, sizes.methodLen);
  }
  if (req.timeoutNano !== 0) {
    buf[pos++] = 0x20;
    pos = writeInt64(buf, pos, int64Of(req.timeoutNano));
  }
  let i = 0;
  for (const kv of req.metadata) {
    const k = sizes.metaLens[i]!;
    const v = sizes.metaLens[i + 1]!;
    const inner = sizes.metaLens[i + 2]!;
    i += 3;
    buf[pos++] = 0x2a;
    pos = writeVarint32(buf, pos, inner);
    if (k > 0) {
      buf[pos++] = 0x0a;
      pos = writeVarint32(buf, pos, k);
      pos = writeUtf8(buf, pos, kv.key, k);
    }
    if (v > 0) {
      buf[pos++] = 0x12;
      pos = writeVarint32(buf, pos, v);
      pos = writeUtf8(buf, pos, kv.value, v);
    }
  }
  if (req.payload.length > 0) {
    buf[pos++] = 0x1a;
    pos = writeVarint32(buf, pos, req.payload.length);
  }
  return pos;
}

/** A Request as one new byte array. */
export function encodeRequest(req: RequestEnvelope): Uint8Array {
  const sizes = new RequestSizes().measure(req);
  const out = new Uint8Array(sizes.total);
  const pos = writeRequestHead(out, 0, req, sizes);
  out.set(req.payload, pos);
  return out;
}

/**
 * Runs `decode` over a reader of `data[start, end)`; malformed bytes are a ProtocolError naming
 * the envelope, the problem and its offset.
 */
function read<T>(what: string, data: Uint8Array, start: number, end: number, decode: (r: Reader) => T): T {
  try {
    return decode(new Reader(data, start, end));
  } catch (e) {
    if (e instanceof DecodeError) throw new ProtocolError(`ttrpc: invalid ${what}: ${e.reason} at offset ${e.offset}`, { cause: e });
    throw e;
  }
}

/** Decodes a Request from `data[start, end)`; throws ProtocolError naming what is wrong. */
export function decodeRequest(data: Uint8Array, start = 0, end = data.length): RequestEnvelope {
  return read("request", data, start, end, readRequest);
}

function readRequest(r: Reader): RequestEnvelope {
  let service = "";
  let method = "";
  let payload = EMPTY;
  let timeoutNano = 0;
  let metadata: KeyValue[] | undefined;
  while (r.pos < r.end) {
    // Known fields of another wire type are skipped as unknown ones, as protobuf-go does.
    const tag = r.tag();
    switch (tag) {
      case 0x0a:
        service = r.string();
        break;
      case 0x12:
        method = r.string();
        break;
      case 0x1a:
        payload = r.bytes();
        break;
      case 0x20:
        timeoutNano = r.int64Number();
        break;
      case 0x2a: {
        const outer = r.enter();
        (metadata ??= []).push(readKeyValue(r));
        r.leave(outer);
        break;
      }
      default:
        r.skip(tag);
    }
  }
  return { service, method, payload, timeoutNano, metadata: metadata ?? NO_METADATA };
}

function readKeyValue(r: Reader): KeyValue {
  let key = "";
  let value = "";
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === 0x0a) key = r.string();
    else if (tag === 0x12) value = r.string();
    else r.skip(tag);
  }
  return { key, value };
}

/** Field sizes of an encoded Response. */
export class ResponseSizes {
  statusLen = 0;
  messageLen = 0;
  detailLens: number[] = [];
  head = 0;
  total = 0;

  measure(status: StatusFields | undefined, payloadLength: number): this {
    let head = 0;
    this.statusLen = 0;
    this.detailLens.length = 0;
    if (status !== undefined) {
      let s = 0;
      if (status.code !== 0) s += 1 + int32Size(status.code);
      this.messageLen = utf8Length(status.message);
      if (this.messageLen > 0) s += 1 + varint32Size(this.messageLen) + this.messageLen;
      for (const d of status.details) {
        const t = utf8Length(d.typeUrl);
        const v = d.value.length;
        const inner = (t > 0 ? 1 + varint32Size(t) + t : 0) + (v > 0 ? 1 + varint32Size(v) + v : 0);
        this.detailLens.push(t, inner);
        s += 1 + varint32Size(inner) + inner;
      }
      this.statusLen = s;
      head += 1 + varint32Size(s) + s;
    }
    if (payloadLength > 0) head += 1 + varint32Size(payloadLength);
    this.head = head;
    this.total = head + payloadLength;
    return this;
  }
}

/** Writes a Response measured by `sizes`, all but the payload's bytes, which must follow. */
export function writeResponseHead(
  buf: Uint8Array,
  pos: number,
  status: StatusFields | undefined,
  payloadLength: number,
  sizes: ResponseSizes,
): number {
  if (status !== undefined) {
    buf[pos++] = 0x0a;
    pos = writeVarint32(buf, pos, sizes.statusLen);
    if (status.code !== 0) {
      buf[pos++] = 0x08;
      pos = writeInt32(buf, pos, status.code);
    }
    if (sizes.messageLen > 0) {
      buf[pos++] = 0x12;
      pos = writeVarint32(buf, pos, sizes.messageLen);
      pos = writeUtf8(buf, pos, status.message, sizes.messageLen);
    }
    let i = 0;
    for (const d of status.details) {
      const t = sizes.detailLens[i]!;
      const inner = sizes.detailLens[i + 1]!;
      i += 2;
      buf[pos++] = 0x1a;
      pos = writeVarint32(buf, pos, inner);
      if (t > 0) {
        buf[pos++] = 0x0a;
        pos = writeVarint32(buf, pos, t);
        pos = writeUtf8(buf, pos, d.typeUrl, t);
      }
      if (d.value.length > 0) {
        buf[pos++] = 0x12;
        pos = writeVarint32(buf, pos, d.value.length);
        buf.set(d.value, pos);
        pos += d.value.length;
      }
    }
  }
  if (payloadLength > 0) {
    buf[pos++] = 0x12;
    pos = writeVarint32(buf, pos, payloadLength);
  }
  return pos;
}

/** A Response as one new byte array. */
export function encodeResponse(status: StatusFields | undefined, payload: Uint8Array = EMPTY): Uint8Array {
  const sizes = new ResponseSizes().measure(status, payload.length);
  const out = new Uint8Array(sizes.total);
  const pos = writeResponseHead(out, 0, status, payload.length, sizes);
  out.set(payload, pos);
  return out;
}

/** Decodes a Response from `data[start, end)`; throws ProtocolError naming what is wrong. */
export function decodeResponse(data: Uint8Array, start = 0, end = data.length): ResponseEnvelope {
  return read("response", data, start, end, readResponse);
}

function readResponse(r: Reader): ResponseEnvelope {
  let status: StatusFields | undefined;
  let payload = EMPTY;
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === 0x0a) {
      const outer = r.enter();
      status = readStatus(r, status);
      r.leave(outer);
    } else if (tag === 0x12) payload = r.bytes();
    else r.skip(tag);
  }
  return { status, payload };
}

/** Reads a google.rpc.Status, merging into `prev` as protobuf does for a repeated message field. */
function readStatus(r: Reader, prev: StatusFields | undefined): StatusFields {
  let code = prev?.code ?? 0;
  let message = prev?.message ?? "";
  const details: StatusDetail[] = prev === undefined ? [] : [...prev.details];
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === 0x08) code = r.int32();
    else if (tag === 0x12) message = r.string();
    else if (tag === 0x1a) {
      const outer = r.enter();
      details.push(readAny(r));
      r.leave(outer);
    } else r.skip(tag);
  }
  return { code, message, details };
}

function readAny(r: Reader): StatusDetail {
  let typeUrl = "";
  let value = EMPTY;
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === 0x0a) typeUrl = r.string();
    else if (tag === 0x12) value = r.bytes();
    else r.skip(tag);
  }
  return { typeUrl, value };
}
