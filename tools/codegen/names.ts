import type { DescMessage } from "@bufbuild/protobuf";

/** The suffix of a message's private helpers: its full name with dots as `$` (unambiguous). */
export function idOf(m: DescMessage): string {
  return m.typeName.replace(/\./g, "$");
}

/** `@T{full.Name}`: the emitter's placeholder for the protobuf-es message type. */
export function shapeRef(m: DescMessage): string {
  return `@T{${m.typeName}}`;
}

/** Field numbers and names as the decoder's error path reads them (`1:id,2:name`). */
export function fieldNames(m: DescMessage): string {
  return m.fields.map((f) => `${f.number}:${f.name}`).join(",");
}
