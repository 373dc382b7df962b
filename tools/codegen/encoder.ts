import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { idOf, shapeRef } from "./names.js";
import { isUnboxed } from "./plan.js";
import { is64Bit, scalarCode, tagBytes } from "./scalars.js";

/*
 * The encoder of a message is two functions over the same field order (by number, as
 * protobuf-es writes, then unknown fields): size_X measures and records in Sizes every length
 * the writer will need (nested messages, map entries, varint-packed fields, strings);
 * write_X writes, reading those lengths back in the same order. One allocation per message.
 */

interface Parts {
  size: string[];
  write: string[];
}

const tagWrite = (no: number, wireType: number): string => tagBytes(no, wireType).map((b) => `buf[pos++] = ${b};`).join(" ");
const tagLen = (no: number, wireType: number): number => tagBytes(no, wireType).length;

/** Size and write code of one string value `v` under tag (no, 2). */
function stringValue(p: Parts, no: number, v: string, ind: string, add = "n"): void {
  p.size.push(`${ind}${add} += ${tagLen(no, 2)} + @{stringSize}(s, ${v});`);
  p.write.push(`${ind}${tagWrite(no, 2)} pos = @{writeString}(buf, pos, ${v}, s);`);
}

function bytesValue(p: Parts, no: number, v: string, ind: string, add = "n"): void {
  p.size.push(`${ind}${add} += ${tagLen(no, 2)} + @{bytesSize}(${v});`);
  p.write.push(`${ind}${tagWrite(no, 2)} pos = @{writeLengthBytes}(buf, pos, ${v});`);
}

function messageValue(p: Parts, no: number, m: DescMessage, v: string, ind: string, add = "n"): void {
  const id = idOf(m);
  p.size.push(`${ind}{ const k = s.reserve(); const l = size_${id}(${v}, s); s.set(k, l); ${add} += ${tagLen(no, 2)} + @{varint32Size}(l) + l; }`);
  p.write.push(`${ind}{ ${tagWrite(no, 2)} const l = s.next(); pos = @{writeVarint32}(buf, pos, l); pos = write_${id}(${v}, buf, pos, s); }`);
}

/** Size and write code of one scalar or enum value `v`, tag included. */
function scalarValue(p: Parts, no: number, type: ScalarType, long: boolean, v: string, ind: string, add = "n"): void {
  if (type === ScalarType.STRING) return stringValue(p, no, v, ind, add);
  if (type === ScalarType.BYTES) return bytesValue(p, no, v, ind, add);
  const c = scalarCode(type, long);
  p.size.push(`${ind}${add} += ${tagLen(no, c.wireType)} + ${c.size(v)};`);
  p.write.push(`${ind}${tagWrite(no, c.wireType)} ${c.write(v)}`);
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

function singular(p: Parts, f: DescField, v: string, ind: string): void {
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

function field(out: Parts, f: DescField): void {
  const get = `m.${f.localName}`;
  const p: Parts = { size: [], write: [] };
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
        p.size.push(`    ${loop} {`);
        p.write.push(`    ${loop} {`);
        messageValue(p, f.number, f.message, "a[i]!", "      ");
        p.size.push("    }");
        p.write.push("    }");
      } else if (f.packed && t !== ScalarType.STRING && t !== ScalarType.BYTES) {
        const c = scalarCode(t, long);
        const tagW = tagWrite(f.number, 2);
        if (c.fixed !== undefined) {
          p.size.push(`    n += ${tagLen(f.number, 2)} + @{varint32Size}(a.length * ${c.fixed}) + a.length * ${c.fixed};`);
          p.write.push(`    ${tagW} pos = @{writeVarint32}(buf, pos, a.length * ${c.fixed});`);
        } else {
          p.size.push(`    let d = 0; ${loop} d += ${c.size("a[i]!")}; s.push(d); n += ${tagLen(f.number, 2)} + @{varint32Size}(d) + d;`);
          p.write.push(`    ${tagW} pos = @{writeVarint32}(buf, pos, s.next());`);
        }
        p.write.push(`    ${loop} { ${c.write("a[i]!")} }`);
      } else {
        p.size.push(`    ${loop} {`);
        p.write.push(`    ${loop} {`);
        scalarValue(p, f.number, t, long, "a[i]!", "      ");
        p.size.push("    }");
        p.write.push("    }");
      }
      break;
    }
    case "map": {
      const vt = mapValueType(f);
      open("r !== undefined", `const r = ${get} as unknown as Record<string, ${vt}>;`);
      p.size.push("    const ks = Object.keys(r);", "    for (let i = 0; i < ks.length; i++) {", "      const k = ks[i]!;", "      const v = r[k]!;");
      p.write.push("    const ks = Object.keys(r);", "    for (let i = 0; i < ks.length; i++) {", "      const k = ks[i]!;", "      const v = r[k]!;");
      p.size.push("      const ek = s.reserve();", "      let e = 0;");
      p.write.push(`      ${tagWrite(f.number, 2)} pos = @{writeVarint32}(buf, pos, s.next());`);
      const key = mapKeyExpr(f.mapKey);
      scalarValue(p, 1, f.mapKey, false, key, "      ", "e");
      if (f.mapKind === "message") messageValue(p, 2, f.message, "v", "      ", "e");
      else scalarValue(p, 2, scalarOf(f), false, "v", "      ", "e");
      p.size.push("      s.set(ek, e);", `      n += ${tagLen(f.number, 2)} + @{varint32Size}(e) + e;`, "    }");
      p.write.push("    }");
      break;
    }
  }
  // One line for a one-statement field, a block otherwise.
  for (const [lines, into] of [
    [p.size, out.size],
    [p.write, out.write],
  ] as const) {
    if (lines.length === 1) into.push(`  { ${head} if (${cond}) { ${lines[0]!.trim()} } }`);
    else into.push(`  { ${head} if (${cond}) {`, ...lines, "  } }");
  }
}

/** A map key (a property name) as the value its scalar type writes, as protobuf-es converts it. */
function mapKeyExpr(t: ScalarType): string {
  if (t === ScalarType.STRING || is64Bit(t)) return "k";
  return t === ScalarType.BOOL ? `(k === "true")` : "Number(k)";
}

/** size_X and write_X for message `m`. */
export function emitEncoder(m: DescMessage): string {
  const id = idOf(m);
  const p: Parts = { size: [], write: [] };
  for (const f of [...m.fields].sort((a, b) => a.number - b.number)) field(p, f);
  p.size.push("  if (m.$unknown !== undefined) n += @{unknownSize}(m.$unknown);");
  p.write.push("  if (m.$unknown !== undefined) pos = @{writeUnknown}(buf, pos, m.$unknown);");
  const T = shapeRef(m);
  return [
    `function size_${id}(m: ${T}, s: @{Sizes}): number {`,
    "  let n = 0;",
    ...p.size,
    "  return n;",
    "}",
    "",
    `function write_${id}(m: ${T}, buf: Uint8Array, pos: number, s: @{Sizes}): number {`,
    ...p.write,
    "  return pos;",
    "}",
    "",
  ].join("\n");
}
