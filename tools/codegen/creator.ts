import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { zeroOf } from "./decoder.js";
import { idOf, shapeRef } from "./names.js";
import { fieldMessage, isUnboxed } from "./plan.js";

/*
 * create_X: what protobuf-es create(schema, init) returns for an init object of message X, built
 * from the descriptor at generation time so that a program can make messages without loading
 * one (members in declaration order, absent ones as create() leaves them, plain objects in
 * message fields created, messages kept as they are, arrays of numbers in bytes fields made
 * Uint8Arrays). fields_X: the field table a GeneratedMessage carries.
 */

function isBytes(f: DescField): boolean {
  return f.fieldKind !== "message" && f.fieldKind !== "enum" && f.scalar === ScalarType.BYTES;
}

/** The expression converting init value `v` of a message field holding `sub`. */
function messageInit(sub: DescMessage, v: string): string {
  return `@{initMessage}(${v}, "${sub.typeName}", create_${idOf(sub)})`;
}

function member(f: DescField): string {
  const name = f.localName;
  switch (f.fieldKind) {
    case "message": {
      if (isUnboxed(f)) {
        const bytes = f.message.fields[0]?.scalar === ScalarType.BYTES;
        return `  v = i.${name}; if (v != null) m.${name} = ${bytes ? "@{initBytes}(v)" : "v"};`;
      }
      return `  v = i.${name}; if (v != null) m.${name} = ${messageInit(f.message, "v")};`;
    }
    case "list": {
      const each = f.listKind === "message" ? (e: string) => messageInit(f.message, e) : isBytes(f) ? (e: string) => `@{initBytes}(${e})` : undefined;
      if (each === undefined) return `  v = i.${name}; m.${name} = v != null ? v : [];`;
      return `  v = i.${name}; m.${name} = Array.isArray(v) ? v.map((e: unknown) => ${each("e")}) : v != null ? v : [];`;
    }
    case "map": {
      const each = f.mapKind === "message" ? (e: string) => messageInit(f.message, e) : isBytes(f) ? (e: string) => `@{initBytes}(${e})` : undefined;
      if (each === undefined) return `  v = i.${name}; m.${name} = v != null ? v : {};`;
      return [
        `  v = i.${name};`,
        "  if (v !== null && typeof v === \"object\" && !Array.isArray(v)) {",
        "    const o: Record<string, unknown> = {}; const from = v as Record<string, unknown>;",
        `    for (const k of Object.keys(from)) @{setOwn}(o, k, ${each("from[k]")});`,
        `    m.${name} = o;`,
        `  } else m.${name} = v != null ? v : {};`,
      ].join("\n");
    }
    default: {
      const value = isBytes(f) ? "@{initBytes}(v)" : "v";
      const zero = zeroOf(f);
      if (zero === undefined) return `  v = i.${name}; if (v != null) m.${name} = ${value};`;
      return `  v = i.${name}; m.${name} = v != null ? ${value} : ${zero};`;
    }
  }
}

function oneofCase(f: DescField): string {
  const value = "(v as { value: unknown }).value";
  const converted = f.fieldKind === "message" ? messageInit(f.message, value) : isBytes(f) ? `@{initBytes}(${value})` : value;
  return `    case "${f.localName}": m.${f.oneof!.localName} = { case: c, value: ${converted} }; break;`;
}

/** create_X for message `m`. */
export function emitCreate(m: DescMessage): string {
  const lines = [
    `function create_${idOf(m)}(init?: object | null): ${shapeRef(m)} {`,
    "  const i = (init ?? {}) as Record<string, unknown>;",
    `  const m: Record<string, unknown> = { $typeName: "${m.typeName}" };`,
  ];
  if (m.members.length > 0) lines.push("  let v: unknown;");
  for (const mem of m.members) {
    if (mem.kind === "oneof") {
      lines.push(
        `  v = i.${mem.localName};`,
        "  {",
        "    const c = v == null ? undefined : (v as { case?: unknown }).case;",
        "    switch (c) {",
        ...mem.fields.map(oneofCase),
        `    default: m.${mem.localName} = { case: undefined };`,
        "    }",
        "  }",
      );
      continue;
    }
    lines.push(member(mem));
  }
  lines.push(`  return m as unknown as ${shapeRef(m)};`, "}", "");
  return lines.join("\n");
}

/** The field table of message `m`, as a FieldInfo array literal. */
export function fieldsLiteral(m: DescMessage): string {
  const rows = m.fields.map((f) => {
    const props = [`localName: "${f.localName}"`, `name: "${f.name}"`, `fieldKind: "${f.fieldKind}"`];
    if (f.fieldKind === "list") props.push(`listKind: "${f.listKind}"`);
    if (f.fieldKind === "map") props.push(`mapKind: "${f.mapKind}"`);
    if (f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar") || (f.fieldKind === "map" && f.mapKind === "scalar")) props.push(`scalar: ${f.scalar}`);
    const sub = fieldMessage(f);
    if (sub !== undefined) props.push(`message: "${sub.typeName}"`);
    return `{ ${props.join(", ")} }`;
  });
  return `[${rows.join(", ")}]`;
}
