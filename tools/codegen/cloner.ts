import { type DescField, type DescMessage, type DescOneof, ScalarType } from "@bufbuild/protobuf";
import { zeroOf } from "./decoder.js";
import { mapValueType, scalarTsType } from "./encoder.js";
import { idOf, shapeRef } from "./names.js";
import { isUnboxed } from "./plan.js";
import { is64Bit } from "./scalars.js";

/*
 * clone_X: the deep copy protobuf-es clone(schema, m) makes of a message X, without its
 * descriptor. The copy is one object literal holding what new_X holds, in the same order (so it
 * shares its hidden class with decoded messages), then the fields create() leaves absent, in
 * declaration order as clone() sets them, then the unknown fields. Bytes, arrays, maps, oneof
 * cells and messages are new; strings, numbers and booleans are shared, being immutable.
 */

/** How one value is copied: its TypeScript type and the expression copying `e`, or none. */
interface Copy {
  readonly type: string;
  /** The copying expression, or undefined when the value itself is the copy (immutable). */
  readonly of: ((e: string) => string) | undefined;
}

function scalarCopy(t: ScalarType, long: boolean): Copy {
  const type = scalarTsType(t, long);
  if (t === ScalarType.BYTES) return { type, of: (e) => `new Uint8Array(${e})` };
  if (is64Bit(t)) return { type, of: (e) => (long ? `@{toString64}(${e})` : `@{toBigint64}(${e})`) };
  return { type, of: undefined };
}

function messageCopy(sub: DescMessage): Copy {
  return { type: shapeRef(sub), of: (e) => `clone_${idOf(sub)}(${e})` };
}

/** The copy of a singular value of `f` (a oneof case, a plain field, an unboxed wrapper). */
function singularCopy(f: DescField): Copy {
  switch (f.fieldKind) {
    case "message":
      if (isUnboxed(f)) return scalarCopy(f.message.fields[0]!.scalar ?? ScalarType.INT32, false);
      return messageCopy(f.message);
    case "enum":
      return { type: "number", of: undefined };
    case "scalar":
      return scalarCopy(f.scalar, f.longAsString);
    default:
      throw new Error(`protoc-gen-nri-wire: ${f.toString()} is not singular`);
  }
}

function elementCopy(f: DescField & { fieldKind: "list" }): Copy {
  if (f.listKind === "message") return messageCopy(f.message);
  if (f.listKind === "enum") return { type: "number", of: undefined };
  return scalarCopy(f.scalar, f.longAsString);
}

function mapValueCopy(f: DescField & { fieldKind: "map" }): Copy {
  if (f.mapKind === "message") return messageCopy(f.message);
  if (f.mapKind === "enum") return { type: "number", of: undefined };
  const c = scalarCopy(f.scalar, false);
  return { type: mapValueType(f), of: c.of };
}

const copied = (c: Copy, e: string): string => (c.of === undefined ? e : c.of(e));

/** The helper copying a oneof cell: a new `{ case, value }`, its value copied. */
function cloneOneof(m: DescMessage, o: DescOneof): string {
  const T = `${shapeRef(m)}["${o.localName}"]`;
  const lines = [`function clone_${idOf(m)}$$${o.localName}(o: ${T}): ${T} {`, "  switch (o.case) {"];
  for (const f of o.fields) lines.push(`    case "${f.localName}": return { case: "${f.localName}", value: ${copied(singularCopy(f), "o.value")} };`);
  lines.push("    default: return { case: undefined };", "  }", "}", "");
  return lines.join("\n");
}

/** clone_X for message `m`, with a helper per oneof. */
export function emitClone(m: DescMessage): string {
  const id = idOf(m);
  const T = shapeRef(m);
  const before: string[] = [];
  const props = [`$typeName: "${m.typeName}"`];
  const after: string[] = [];
  let n = 0;
  for (const member of m.members) {
    if (member.kind === "oneof") {
      props.push(`${member.localName}: clone_${id}$$${member.localName}(m.${member.localName})`);
      continue;
    }
    const name = member.localName;
    if (zeroOf(member) === undefined) continue;
    switch (member.fieldKind) {
      case "list": {
        const c = elementCopy(member);
        if (c.of === undefined) {
          props.push(`${name}: m.${name}.slice()`);
          break;
        }
        const k = n++;
        before.push(`  const a${k} = m.${name}; const l${k}: ${c.type}[] = []; for (let i = 0; i < a${k}.length; i++) l${k}.push(${c.of(`a${k}[i]!`)});`);
        props.push(`${name}: l${k}`);
        break;
      }
      case "map": {
        const c = mapValueCopy(member);
        if (c.of === undefined) {
          // Own enumerable properties, `__proto__` included, in the same order.
          props.push(`${name}: { ...m.${name} }`);
          break;
        }
        const k = n++;
        before.push(
          `  const r${k} = m.${name} as unknown as Record<string, ${c.type}>; const o${k}: Record<string, ${c.type}> = {}; for (const key of Object.keys(r${k})) @{setOwn}(o${k}, key, ${c.of(`r${k}[key]!`)});`,
        );
        props.push(`${name}: o${k}`);
        break;
      }
      default:
        props.push(`${name}: ${copied(singularCopy(member), `m.${name}`)}`);
    }
  }
  // Fields create() leaves absent (messages, proto3 optional), set when present, as clone() does.
  for (const f of m.fields) {
    if (f.oneof !== undefined || zeroOf(f) !== undefined) continue;
    after.push(`  { const v = m.${f.localName}; if (v !== undefined) o.${f.localName} = ${copied(singularCopy(f), "v")}; }`);
  }
  return [
    "",
    ...m.oneofs.map((o) => cloneOneof(m, o)),
    `function clone_${id}(m: ${T}): ${T} {`,
    ...before,
    `  const o: Record<string, unknown> = { ${props.join(", ")} };`,
    ...after,
    "  const u = m.$unknown; if (u !== undefined && u.length > 0) o.$unknown = @{copyUnknown}(u);",
    `  return o as unknown as ${T};`,
    "}",
    "",
  ].join("\n");
}
