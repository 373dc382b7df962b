import { readFileSync } from "node:fs";

/** One recorded ttrpc message of test/fixtures/vectors/NAME.frames.json (the fields used here). */
export interface RecordedMessage {
  order: number;
  dir: "p2r" | "r2p";
  connId: number;
  streamId: number;
  type: number;
  service: string;
  method: string;
  status?: { code: number; message: string };
  payloadType?: string;
  payloadHex?: string;
  payload?: unknown;
}

/** The messages of a recorded session, in order. */
export function loadSession(name: string): RecordedMessage[] {
  const url = new URL(`../fixtures/vectors/${name}.frames.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, "utf8")) as { messages: RecordedMessage[] }).messages;
}

export const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "hex"));
export { hex } from "../support/bytes.js";
