import type { JsonValue } from "@bufbuild/protobuf";
import type { Revision } from "../api/revision.js";
import { type Capture, decodeCapture, parseNanoTime } from "./capture-file.js";
import type { CallKind, SessionRecord } from "./session-decoder.js";

/** One ttrpc call of a recorded connection: its request and what answered it. */
export interface SessionCall {
  /** Who called: the runtime (a Plugin method, mux conn 1) or the plugin (a Runtime method, conn 2). */
  readonly caller: "runtime" | "plugin";
  readonly conn: number;
  readonly stream: number;
  /** The method, and for StateChange the dedicated call it stands for. */
  readonly method: string;
  readonly translatesTo?: string;
  readonly revision?: Revision;
  readonly calls?: CallKind;
  /** When the request was read, in nanoseconds since the epoch (or since the capture started, when its index has no start time). */
  readonly startNs: bigint;
  /** Nanoseconds from the request to its answer; undefined when none came. */
  readonly latencyNs?: number;
  readonly request?: JsonValue;
  readonly response?: JsonValue;
  /** The status the call was answered with, when not OK. */
  readonly status?: { readonly code: number; readonly name: string; readonly message: string };
}

/** A recorded connection as calls: who registered, what each side spoke, every call in order. */
export interface SessionCalls {
  readonly session: string;
  /** `NN-name` as the plugin registered, when it did. */
  readonly plugin?: string;
  /** The revision the plugin registered in, and the one the runtime called it in. */
  readonly pluginRevision?: Revision;
  readonly runtimeRevision?: Revision;
  /** How the runtime sent the old events: dedicated calls or StateChange. */
  readonly eventCalls?: CallKind;
  /** The runtime's name, version and NRI release, as its Configure said. */
  readonly runtime?: { readonly name: string; readonly version: string; readonly nriVersion: string };
  readonly calls: readonly SessionCall[];
  /** Damage found in the bytes, each with its offset. */
  readonly damage: readonly SessionRecord[];
}

/** The calls of a capture: requests paired with their responses by conn and stream. */
export function sessionCalls(capture: Capture): SessionCalls {
  const records = decodeCapture(capture);
  const started = capture.index.started === undefined ? undefined : parseNanoTime(capture.index.started);
  const at = (r: SessionRecord): bigint => (started ?? 0n) + BigInt(Math.round(r.t_ns));
  const open = new Map<string, { call: SessionCall; at: bigint; index: number }>();
  const calls: SessionCall[] = [];
  const damage: SessionRecord[] = [];
  for (const r of records) {
    if (r.error !== undefined && r.type === undefined) {
      damage.push(r);
      continue;
    }
    if (r.conn === undefined || r.stream === undefined || r.method === undefined) continue;
    const key = `${r.conn}/${r.stream}`;
    if (r.type === "request") {
      const call: SessionCall = {
        caller: r.conn === 1 ? "runtime" : "plugin",
        conn: r.conn,
        stream: r.stream,
        method: r.method,
        ...(r.translatesTo === undefined ? {} : { translatesTo: r.translatesTo }),
        ...(r.revision === undefined ? {} : { revision: r.revision }),
        ...(r.calls === undefined ? {} : { calls: r.calls }),
        startNs: at(r),
        ...(r.payload === undefined ? {} : { request: r.payload }),
      };
      open.set(key, { call, at: at(r), index: calls.length });
      calls.push(call);
    } else if (r.type === "response") {
      const o = open.get(key);
      if (o === undefined) continue;
      open.delete(key);
      const answered: SessionCall = {
        ...o.call,
        latencyNs: Number(at(r) - o.at),
        ...(r.payload === undefined ? {} : { response: r.payload }),
        ...(r.status === undefined || r.status.code === 0 ? {} : { status: r.status }),
      };
      calls[o.index] = answered;
    }
  }
  const field = (v: JsonValue | undefined, k: string): string => {
    const x = v !== null && typeof v === "object" && !Array.isArray(v) ? v[k] : undefined;
    return typeof x === "string" ? x : "";
  };
  const registered = calls.find((c) => c.method === "RegisterPlugin" && c.latencyNs !== undefined && c.status === undefined);
  const configure = calls.find((c) => c.method === "Configure");
  const name = field(registered?.request, "pluginName");
  const idx = field(registered?.request, "pluginIdx");
  const eventCalls = calls.some((c) => c.calls === "statechange") ? "statechange" : calls.some((c) => c.calls === "dedicated") ? "dedicated" : undefined;
  return {
    session: capture.index.session,
    ...(registered === undefined ? {} : { plugin: `${idx}-${name}` }),
    ...(registered?.revision === undefined ? {} : { pluginRevision: registered.revision }),
    ...(configure?.revision === undefined ? {} : { runtimeRevision: configure.revision }),
    ...(eventCalls === undefined ? {} : { eventCalls }),
    ...(configure === undefined
      ? {}
      : { runtime: { name: field(configure.request, "runtimeName"), version: field(configure.request, "runtimeVersion"), nriVersion: field(configure.request, "NRIVersion") } }),
    calls,
    damage,
  };
}
