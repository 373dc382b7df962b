import type { Input, InputValue } from "./target.js";

/** Input values as JSON: bytes as `{"base64": ...}`, chunk lists as arrays of those. */
export type JsonValue = number | string | boolean | { readonly base64: string } | readonly { readonly base64: string }[];

const b64 = (b: Uint8Array): { base64: string } => ({ base64: Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64") });
const unb64 = (v: unknown, where: string): Uint8Array => {
  if (typeof v !== "object" || v === null || typeof (v as { base64?: unknown }).base64 !== "string") throw new Error(`fuzz: ${where} is not {"base64": ...}`);
  return new Uint8Array(Buffer.from((v as { base64: string }).base64, "base64"));
};

/** An input as JSON data. */
export function inputToJson(input: Input): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v instanceof Uint8Array) out[k] = b64(v);
    else if (Array.isArray(v)) out[k] = (v as readonly Uint8Array[]).map(b64);
    else out[k] = v as number | string | boolean;
  }
  return out;
}

/** An input from JSON data made by inputToJson (`where` names it in errors). */
export function inputFromJson(json: unknown, where: string): Input {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error(`fuzz: ${where} is not an object`);
  const out: Record<string, InputValue> = {};
  for (const [k, v] of Object.entries(json)) {
    if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") out[k] = v;
    else if (Array.isArray(v)) out[k] = v.map((x, i) => unb64(x, `${where}.${k}[${i}]`));
    else out[k] = unb64(v, `${where}.${k}`);
  }
  return out;
}
