import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { mapValueType, scalarTsType } from "./encoder.js";
import { fieldNames, idOf, shapeRef } from "./names.js";
import { isUnboxed } from "./plan.js";
import { scalarCode, tagValue } from "./scalars.js";

/*
 * The decoder of a message: new_X makes the zero message exactly as protobuf-es create() does
 * (same properties, same order), read_X reads fields into a message until the reader's end,
 * merging as protobuf requires (a repeated singular message merges, a repeated scalar replaces,
 * lists append, maps overwrite by key). A tag with an unexpected wire type is an unknown field,
 * as in protobuf-go. Errors are re-raised once, naming the message and the field.
 */

/** The zero value of a field as create() sets it, or undefined when create() leaves it absent. */
export function zeroOf(f: DescField): string | undefined {
  switch (f.fieldKind) {
    case "list":
      return "[]";
    case "map":
      return "{}";
    case "message":
      return undefined;
    case "enum":
      return f.presence === 2 ? String(f.enum.values[0]!.number) : undefined;
    case "scalar":
      return f.presence === 2 ? scalarCode(f.scalar, f.longAsString).zero : undefined;
  }
}

function newMessage(m: DescMessage): string {
  const props = [`$typeName: "${m.typeName}"`];
  for (const member of m.members) {
    if (member.kind === "oneof") {
      props.push(`${member.localName}: { case: undefined }`);
      continue;
    }
    const zero = zeroOf(member);
    if (zero !== undefined) props.push(`${member.localName}: ${zero}`);
  }
  return `function new_${idOf(m)}(): ${shapeRef(m)} {\n  return { ${props.join(", ")} };\n}\n`;
}

function readScalar(t: ScalarType, long: boolean): string {
  return scalarCode(t, long).read;
}

/** Reads a length-delimited message of type `sub` merged into `into`; yields the expression. */
function readMessage(sub: DescMessage, into: string): string {
  return `read_${idOf(sub)}(r, ${into})`;
}

function cases(f: DescField): string[] {
  const name = f.localName;
  const at = (wireType: number): string => `    case ${tagValue(f.number, wireType)}:`;
  switch (f.fieldKind) {
    case "scalar":
    case "enum": {
      const t = f.fieldKind === "enum" ? ScalarType.INT32 : f.scalar;
      const long = f.fieldKind === "scalar" && f.longAsString;
      const c = scalarCode(t, long);
      const value = c.read;
      if (f.oneof !== undefined) return [`${at(c.wireType)} m.${f.oneof.localName} = { case: "${name}", value: ${value} }; break;`];
      return [`${at(c.wireType)} m.${name} = ${value}; break;`];
    }
    case "message": {
      const sub = f.message;
      const id = idOf(sub);
      if (f.oneof !== undefined) {
        const o = f.oneof.localName;
        return [
          `${at(2)} {`,
          `      const k = r.enter(); const o = m.${o};`,
          `      m.${o} = { case: "${name}", value: ${readMessage(sub, `o.case === "${name}" ? o.value : new_${id}()`)} };`,
          "      r.leave(k); break;",
          "    }",
        ];
      }
      if (isUnboxed(f)) {
        return [
          `${at(2)} {`,
          `      const k = r.enter(); const w = new_${id}(); const v = m.${name}; if (v !== undefined) w.value = v;`,
          `      m.${name} = ${readMessage(sub, "w")}.value;`,
          "      r.leave(k); break;",
          "    }",
        ];
      }
      return [`${at(2)} { const k = r.enter(); m.${name} = ${readMessage(sub, `m.${name} ?? new_${id}()`)}; r.leave(k); break; }`];
    }
    case "list": {
      if (f.listKind === "message") {
        return [`${at(2)} { const k = r.enter(); m.${name}.push(${readMessage(f.message, `new_${idOf(f.message)}()`)}); r.leave(k); break; }`];
      }
      const t = f.listKind === "enum" ? ScalarType.INT32 : f.scalar;
      const long = f.listKind === "scalar" && f.longAsString;
      const c = scalarCode(t, long);
      const one = `${at(c.wireType)} m.${name}.push(${c.read}); break;`;
      if (c.wireType === 2) return [one];
      // Packed and unpacked are both accepted, whichever the field declares.
      return [one, `${at(2)} { const k = r.limit(); const l = m.${name}; while (r.pos < r.end) l.push(${c.read}); r.unlimit(k); break; }`];
    }
    case "map": {
      const kc = scalarCode(f.mapKey, false);
      const keyTag = tagValue(1, kc.wireType);
      let valTag: number;
      let valRead: string;
      let valDefault: string;
      if (f.mapKind === "message") {
        valTag = tagValue(2, 2);
        valRead = `{ const k1 = r.enter(); v = ${readMessage(f.message, `v ?? new_${idOf(f.message)}()`)}; r.leave(k1); }`;
        valDefault = `new_${idOf(f.message)}()`;
      } else {
        const t = f.mapKind === "enum" ? ScalarType.INT32 : f.scalar;
        const vc = scalarCode(t, false);
        valTag = tagValue(2, vc.wireType);
        valRead = `v = ${vc.read};`;
        valDefault = f.mapKind === "enum" ? String(f.enum.values[0]!.number) : vc.zero;
      }
      return [
        `${at(2)} {`,
        `      const k0 = r.limit(); let key: ${scalarTsType(f.mapKey, false)} = ${kc.zero}; let v: ${mapValueType(f)} | undefined;`,
        "      while (r.pos < r.end) {",
        "        const t = r.entryTag();",
        `        if (t === ${keyTag}) key = ${kc.read};`,
        `        else if (t === ${valTag}) ${valRead}`,
        "        else r.skip(t);",
        "      }",
        `      r.unlimit(k0); @{setOwn}(m.${name}, key, v ?? ${valDefault}); break;`,
        "    }",
      ];
    }
  }
}

/** new_X and read_X for message `m`. */
export function emitDecoder(m: DescMessage): string {
  const id = idOf(m);
  const T = shapeRef(m);
  const body = m.fields.flatMap(cases);
  return [
    newMessage(m),
    `const names_${id} = "${fieldNames(m)}";`,
    "",
    `function read_${id}(r: @{Reader}, m: ${T}): ${T} {`,
    "  const end = r.end;",
    "  let tag = 0;",
    "  try {",
    "    while (r.pos < end) {",
    "      tag = r.tag();",
    "      switch (tag) {",
    ...body.map((l) => `    ${l}`),
    "        default:",
    "          r.unknown(m, tag);",
    "      }",
    "    }",
    "  } catch (e) {",
    `    throw @{decodeFailure}(e, "${m.typeName}", tag >>> 3, names_${id});`,
    "  }",
    "  return m;",
    "}",
    "",
  ].join("\n");
}
