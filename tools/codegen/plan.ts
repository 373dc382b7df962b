import type { DescField, DescFile, DescMessage } from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";

/** google.protobuf.Edition.EDITION_PROTO3. */
const EDITION_PROTO3 = 999;

/** Every message declared in `file`, nested ones included (map entries are not types). */
export function messagesOf(file: DescFile): DescMessage[] {
  const out: DescMessage[] = [];
  const visit = (m: DescMessage): void => {
    out.push(m);
    m.nestedMessages.forEach(visit);
  };
  file.messages.forEach(visit);
  return out;
}

/** The message type a field refers to (singular, list element or map value), if any. */
export function fieldMessage(field: DescField): DescMessage | undefined {
  switch (field.fieldKind) {
    case "message":
      return field.message;
    case "list":
      return field.listKind === "message" ? field.message : undefined;
    case "map":
      return field.mapKind === "message" ? field.message : undefined;
    default:
      return undefined;
  }
}

/** Whether a singular field holds a google.protobuf wrapper unboxed, as protobuf-es does. */
export function isUnboxed(field: DescField): boolean {
  return field.fieldKind === "message" && field.oneof === undefined && isWrapperDesc(field.message);
}

/**
 * Why this message's own fields cannot be generated, or undefined. The generator covers proto3:
 * closed enums, groups, and google.protobuf.Struct held as JSON are left to the reflective codec.
 */
function ownObstacle(m: DescMessage): string | undefined {
  if (m.file.edition !== EDITION_PROTO3) return "not proto3";
  for (const f of m.fields) {
    if ((f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message")) && f.delimitedEncoding) return `${f.name} is a group`;
    if (f.enum !== undefined && !f.enum.open) return `${f.name} is a closed enum`;
    const sub = fieldMessage(f);
    if (sub?.typeName === "google.protobuf.Struct" && m.typeName !== "google.protobuf.Value") return `${f.name} holds Struct as JSON`;
  }
  return undefined;
}

/** What one output file holds: codecs to export, and every message their code reaches. */
export interface FilePlan {
  /** Messages of the file that get exported encode/decode functions. */
  readonly exported: DescMessage[];
  /** Messages of the file left to the reflective codec, with the reason. */
  readonly skipped: { message: DescMessage; reason: string }[];
  /** Every message whose private helpers the file needs (exported ones and those they reach). */
  readonly reached: DescMessage[];
}

/** The plan for `file`: a message is generated when it and everything it reaches is supported. */
export function planFile(file: DescFile): FilePlan {
  const exported: DescMessage[] = [];
  const skipped: { message: DescMessage; reason: string }[] = [];
  const reached = new Map<string, DescMessage>();
  for (const m of messagesOf(file)) {
    const closure = reach(m);
    let reason: string | undefined;
    for (const c of closure) {
      const o = ownObstacle(c);
      if (o !== undefined) {
        reason = c === m ? o : `reaches ${c.typeName}: ${o}`;
        break;
      }
    }
    if (reason !== undefined) {
      skipped.push({ message: m, reason });
      continue;
    }
    exported.push(m);
    for (const c of closure) reached.set(c.typeName, c);
  }
  return { exported, skipped, reached: [...reached.values()] };
}

/** `m` and every message reachable through its fields. */
function reach(m: DescMessage): DescMessage[] {
  const seen = new Map<string, DescMessage>();
  const stack = [m];
  while (stack.length > 0) {
    const cur = stack.pop()!;
    if (seen.has(cur.typeName)) continue;
    seen.set(cur.typeName, cur);
    for (const f of cur.fields) {
      const sub = fieldMessage(f);
      if (sub !== undefined) stack.push(sub);
    }
  }
  return [...seen.values()];
}
