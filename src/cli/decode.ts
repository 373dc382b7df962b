import { decodeCapture, readCapture } from "../capture/capture-file.js";
import type { SessionRecord } from "../capture/session-decoder.js";
import { type Command, EXIT } from "./command.js";
import { UsageError } from "./errors.js";

/** A record as printed: the session it belongs to first, then the record's own fields. */
export type PrintedRecord = { session: string } & SessionRecord;

const SIDES = { p2r: "plugin → runtime", r2p: "runtime → plugin" } as const;

function shortService(service: string): string {
  const dot = service.lastIndexOf(".");
  return dot < 0 ? service : service.slice(dot + 1);
}

function flagNames(flags: number): string {
  const names = [[1, "remote-closed"], [2, "remote-open"], [4, "no-data"]] as const;
  const set: string[] = names.filter(([bit]) => (flags & bit) !== 0).map(([, n]) => n);
  const unknown = flags & ~7;
  if (unknown !== 0) set.push(`0x${unknown.toString(16)}`);
  return set.join(",");
}

/**
 * One record for people: a heading line with the time since the capture started, the side that
 * wrote it, conn, stream, frame type, call, revision and calls, then the status and the payload as
 * indented JSON. Damage is one line starting with `!!`.
 */
export function prettyRecord(r: PrintedRecord): string {
  const ms = (r.t_ns / 1e6).toFixed(3).padStart(10);
  const head = `${ms} ms  ${r.session}  ${SIDES[r.dir]}  @${r.offset}`;
  if (r.type === undefined) return `${head}  !! ${r.error ?? ""}`;
  const parts = [head, `conn ${r.conn} stream ${r.stream}`, r.type.padEnd(8)];
  if (r.method !== undefined) parts.push(`${shortService(r.service ?? "")}.${r.method}`);
  if (r.translatesTo !== undefined) parts.push(`(= ${r.translatesTo})`);
  if (r.revision !== undefined) parts.push(`[${r.revision} ${r.calls}]`);
  if (r.flags !== 0 && r.flags !== undefined) parts.push(`flags ${flagNames(r.flags)}`);
  if (r.timeoutNano !== undefined) parts.push(`timeout ${(r.timeoutNano / 1e6).toFixed(0)} ms`);
  const lines = [parts.join("  ")];
  const indent = (text: string): string =>
    text
      .split("\n")
      .map((l) => `      ${l}`)
      .join("\n");
  if (r.status !== undefined) lines.push(indent(`status ${r.status.name.toUpperCase()} (${r.status.code}): ${r.status.message}`));
  if (r.metadata !== undefined) lines.push(indent(`metadata ${r.metadata.map((kv) => `${kv.key}=${kv.value}`).join(" ")}`));
  if (r.payload !== undefined) lines.push(indent(`${r.payloadType ?? ""} ${JSON.stringify(r.payload, null, 2)}`));
  else if (r.payloadHex !== undefined) lines.push(indent(`${r.payloadType ?? "payload"} (hex) ${r.payloadHex}`));
  if (r.error !== undefined) lines.push(indent(`!! ${r.error}`));
  return lines.join("\n");
}

/** A record as one output line: JSON, or the pretty form. */
export function formatRecord(r: PrintedRecord, pretty: boolean): string {
  return pretty ? prettyRecord(r) : JSON.stringify(r);
}

/**
 * Prints every message of each capture, one JSON line each (or the pretty form). Returns 0 when
 * every byte decoded, 1 when a capture has damage (everything that could be decoded is printed).
 */
export function decodeCaptures(paths: readonly string[], pretty: boolean, print: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): number {
  let damaged = false;
  for (const path of paths) {
    const capture = readCapture(path);
    for (const r of decodeCapture(capture)) {
      if (r.error !== undefined) damaged = true;
      print(formatRecord({ session: capture.index.session, ...r }, pretty));
    }
  }
  return damaged ? EXIT.failed : EXIT.ok;
}

/** `nri-wire decode`. */
export const decodeCommand: Command = {
  name: "decode",
  summary: "Print a recorded NRI session (a capture's .index.json), one JSON line per ttrpc message.",
  description:
    "Each line: time, side, offset, mux conn, ttrpc stream, frame type and flags, service and method,\nstatus, payload as protobuf JSON, revision, calls (dedicated, statechange or common) and, for\nStateChange, the dedicated call.\nDamage is printed as lines with an error and its offset; the exit code is then 1.",
  options: { pretty: { type: "boolean", description: "print for people instead of JSON lines" } },
  positionals: "CAPTURE.index.json...",
  async run(v, positionals) {
    if (positionals.length === 0) throw new UsageError("nri-wire decode: give at least one capture index file");
    return decodeCaptures(positionals, v.pretty === true);
  },
};
