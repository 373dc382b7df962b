import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { idOf, shapeRef } from "./names.js";
import { isUnboxed } from "./plan.js";
import { is64Bit, scalarCode, tagBytes } from "./scalars.js";

/*
 * The encoder of a message is one function, write_X, over the fields in number order (as
 * protobuf-es writes them, then unknown fields), in one pass: a length-delimited value (a nested
 * message, a map entry, a packed field) reserves one byte for its length, is written after it,
 * and closeLength() fills the byte in, moving the value up in the rare case its length takes
 * more. Writes go to a shared scratch buffer; the encoding is copied out of it at the end.
 */

type Lines = string[];

const tagWrite = (no: number, wireType: number): string => tagBytes(no, wireType).map((b) => `buf[pos++] = ${b};`).join(" ");

/** Code writing `body` (statements advancing `pos`) as one length-delimited value under tag (no, 2). */
function delimited(no: number, body: string): string {
  return `${tagWrite(no, 2)} { const at = pos; pos++; ${body} pos = @{closeLength}(buf, at, pos); }`;
}

function messageValue(out: Lines, no: number, m: DescMessage, v: string, ind: string): void {
  out.push(`${ind}${delimited(no, `pos = write_${idOf(m)}(${v}, buf, pos);`)}`);
}

/** Write code of one scalar or enum value `v`, tag included. */
function scalarValue(out: Lines, no: number, type: ScalarType, long: boolean, v: string, ind: string): void {
  if (type === ScalarType.STRING) {
    out.push(`${ind}${tagWrite(no, 2)} pos = @{writeString}(buf, pos, ${v});`);
    return;
  }
  if (type === ScalarType.BYTES) {
    out.push(`${ind}${tagWrite(no, 2)} pos = @{writeLengthBytes}(buf, pos, ${v});`);
    return;
  }
  const c = scalarCode(type, long);
  out.push(`${ind}${tagWrite(no, c.wireType)} ${c.write(v)}`);
}

/** The scalar type of a field's values (enums are int32 on the wire). */
function scalarOf(f: DescField): ScalarType {
  switch (f.fieldKind) {
    case "scalar":
      return f.scalar;
    case "list":
      return f.listKind === "scalar" ? f.scalar : ScalarType.INT32;
    case "map":
      return f.mapKind === "scalar" ? f.scalar : ScalarType.INT32;
    default:
      return ScalarType.INT32;
  }
}

/** The TypeScript type of a map value, for the casts the generated code needs. */
export function mapValueType(f: DescField & { fieldKind: "map" }): string {
  if (f.mapKind === "message") return shapeRef(f.message);
  if (f.mapKind === "enum") return "number";
  return scalarTsType(f.scalar, false);
}

export function scalarTsType(t: ScalarType, long: boolean): string {
  if (is64Bit(t)) return long ? "string" : "bigint";
  switch (t) {
    case ScalarType.STRING:
      return "string";
    case ScalarType.BOOL:
      return "boolean";
    case ScalarType.BYTES:
      return "Uint8Array";
    default:
      return "number";
  }
}

function singular(p: Lines, f: DescField, v: string, ind: string): void {
  switch (f.fieldKind) {
    case "scalar":
      return scalarValue(p, f.number, f.scalar, f.longAsString, v, ind);
    case "enum":
      return scalarValue(p, f.number, ScalarType.INT32, false, v, ind);
    case "message":
      if (isUnboxed(f)) {
        const w = `{ $typeName: "${f.message.typeName}", value: ${v} } as ${shapeRef(f.message)}`;
        return messageValue(p, f.number, f.message, `(${w})`, ind);
      }
      return messageValue(p, f.number, f.message, v, ind);
    default:
      throw new Error(`protoc-gen-nri-wire: ${f.toString()} is not singular`);
  }
}

function field(out: Lines, f: DescField): void {
  const get = `m.${f.localName}`;
  const p: Lines = [];
  let head = "";
  let cond = "";
  const open = (c: string, h: string): void => {
    cond = c;
    head = h;
  };
  switch (f.fieldKind) {
    case "scalar":
    case "enum":
    case "message": {
      if (f.oneof !== undefined) {
        open(`o !== undefined && o.case === "${f.localName}"`, `const o = m.${f.oneof.localName};`);
        singular(p, f, "o.value", "    ");
      } else if (f.fieldKind === "message" || f.presence !== 2) {
        // Messages, and scalars with explicit presence (proto3 optional): set when defined.
        open("v != null", `const v = ${get};`);
        singular(p, f, "v", "    ");
      } else {
        const isSet = f.fieldKind === "enum" ? "v" : scalarCode(f.scalar, f.longAsString).isSet("v");
        open(isSet, `const v = ${get};`);
        singular(p, f, "v", "    ");
      }
      break;
    }
    case "list": {
      open("a !== undefined && a.length !== 0", `const a = ${get};`);
      const t = scalarOf(f);
      const long = f.listKind === "scalar" && f.longAsString;
      const loop = "for (let i = 0; i < a.length; i++)";
      if (f.listKind === "message") {
        p.push(`    ${loop} {`);
        messageValue(p, f.number, f.message, "a[i]!", "      ");
        p.push("    }");
      } else if (f.packed && t !== ScalarType.STRING && t !== ScalarType.BYTES) {
        const c = scalarCode(t, long);
        if (c.fixed !== undefined) {
          p.push(`    ${tagWrite(f.number, 2)} pos = @{writeVarint32}(buf, pos, a.length * ${c.fixed});`, `    ${loop} { ${c.write("a[i]!")} }`);
        } else p.push(`    ${delimited(f.number, `${loop} { ${c.write("a[i]!")} }`)}`);
      } else {
        p.push(`    ${loop} {`);
        scalarValue(p, f.number, t, long, "a[i]!", "      ");
        p.push("    }");
      }
      break;
    }
    case "map": {
      const vt = mapValueType(f);
      open("r !== undefined", `const r = ${get} as unknown as Record<string, ${vt}>;`);
      p.push("    const ks = Object.keys(r);", "    for (let i = 0; i < ks.length; i++) {", "      const k = ks[i]!;", "      const v = r[k]!;");
      p.push(`      ${tagWrite(f.number, 2)} const at = pos; pos++;`);
      scalarValue(p, 1, f.mapKey, false, mapKeyExpr(f.mapKey), "      ");
      if (f.mapKind === "message") messageValue(p, 2, f.message, "v", "      ");
      else scalarValue(p, 2, scalarOf(f), false, "v", "      ");
      p.push("      pos = @{closeLength}(buf, at, pos);", "    }");
      break;
    }
  }
  // One line for a one-statement field, a block otherwise.
  if (p.length === 1) out.push(`  { ${head} if (${cond}) { ${p[0]!.trim()} } }`);
  else out.push(`  { ${head} if (${cond}) {`, ...p, "  } }");
}

/** A map key (a property name) as the value its scalar type writes, as protobuf-es converts it. */
function mapKeyExpr(t: ScalarType): string {
  if (t === ScalarType.STRING || is64Bit(t)) return "k";
  return t === ScalarType.BOOL ? `(k === "true")` : "Number(k)";
}

/** write_X for message `m`: writes it at `pos` and returns the position after it. */
export function emitEncoder(m: DescMessage): string {
  const id = idOf(m);
  const p: Lines = [];
  for (const f of [...m.fields].sort((a, b) => a.number - b.number)) field(p, f);
  p.push("  if (m.$unknown !== undefined) pos = @{writeUnknown}(buf, pos, m.$unknown);");
  return [`function write_${id}(m: ${shapeRef(m)}, buf: Uint8Array, pos: number): number {`, ...p, "  return pos;", "}", ""].join("\n");
}
