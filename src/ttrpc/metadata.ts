import type { KeyValue } from "./envelope.js";

/** Request metadata as given by a caller: a record (arrays for repeated keys) or entries. */
export type MetadataInit = Readonly<Record<string, string | readonly string[]>> | readonly KeyValue[];

const NONE: readonly KeyValue[] = [];

/** Metadata as the list of entries the wire carries. */
export function toKeyValues(init: MetadataInit | undefined): readonly KeyValue[] {
  if (init === undefined) return NONE;
  if (Array.isArray(init)) return init as readonly KeyValue[];
  const out: KeyValue[] = [];
  for (const [key, v] of Object.entries(init as Record<string, string | readonly string[]>)) {
    if (typeof v === "string") out.push({ key, value: v });
    else for (const value of v) out.push({ key, value });
  }
  return out;
}

/** Metadata entries grouped by key, values in arrival order. */
export function groupMetadata(entries: readonly KeyValue[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { key, value } of entries) {
    const list = out.get(key);
    if (list === undefined) out.set(key, [value]);
    else list.push(value);
  }
  return out;
}
