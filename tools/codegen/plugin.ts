import type { DescMessage } from "@bufbuild/protobuf";
import { type GeneratedFile, type Printable, type Schema, createEcmaScriptPlugin } from "@bufbuild/protoplugin";
import { emitClone } from "./cloner.js";
import { emitCreate, fieldsLiteral } from "./creator.js";
import { emitDecoder } from "./decoder.js";
import { emitEncoder } from "./encoder.js";
import { emitLite } from "./lite.js";
import { idOf, shapeRef } from "./names.js";
import { planFile } from "./plan.js";

/** Options of protoc-gen-nri-wire (besides the standard ones of @bufbuild/protoplugin). */
export interface Options {
  /**
   * Where generated code imports its support from: a package path (default `nri-wire/codegen`,
   * which never loads @bufbuild/protobuf), or a path starting with `./` or `../`, taken relative
   * to the output root.
   */
  wireImport: string;
}

function parseOptions(raw: { key: string; value: string }[]): Options {
  const out: Options = { wireImport: "nri-wire/codegen" };
  for (const { key, value } of raw) {
    if (key === "wire_import") out.wireImport = value;
    else throw new Error(`protoc-gen-nri-wire: unknown option ${key}`);
  }
  return out;
}

/**
 * Turns the emitters' text into printables: `@{name}` imports `name` from the codegen support,
 * `@t{Name}` a type from @bufbuild/protobuf, `@w{Name}` a type from the codegen support,
 * `@T{full.Name}` the protobuf-es message type and `@S{full.Name}` its schema.
 */
function resolve(f: GeneratedFile, text: string, wire: string, messages: ReadonlyMap<string, DescMessage>): Printable[] {
  const out: Printable[] = [];
  const re = /@(T|S|t|w)?\{([\w.$]+)\}/g;
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [, kind, name] = m as unknown as [string, string | undefined, string];
    if (kind === undefined) out.push(f.import(name, wire));
    else if (kind === "t") out.push(f.import(name, "@bufbuild/protobuf", true));
    else if (kind === "w") out.push(f.import(name, wire, true));
    else {
      const desc = messages.get(name);
      if (desc === undefined) throw new Error(`protoc-gen-nri-wire: no message ${name}`);
      // Schemas are named in types only: the codecs never touch a descriptor.
      out.push(kind === "T" ? f.importShape(desc) : f.importSchema(desc, true));
    }
  }
  out.push(text.slice(last));
  return out;
}

function generateTs(schema: Schema<Options>): void {
  for (const file of schema.files) {
    emitLite(schema.generateFile(`${file.name}_lite.ts`), file);
    const plan = planFile(file);
    if (plan.exported.length === 0) continue;
    const f = schema.generateFile(`${file.name}_codec.ts`);
    f.preamble(file);
    const messages = new Map<string, DescMessage>(plan.reached.map((m) => [m.typeName, m]));
    const print = (text: string): void => f.print(...resolve(f, text, schema.options.wireImport, messages));
    const notes = plan.skipped.map(({ message, reason }) => `\n * ${message.typeName} is left to the reflective codec: ${reason}.`).join("");
    print(
      `/*\n * Binary codecs for the messages of ${file.proto.name}: the bytes protobuf-es toBinary writes,\n * strict decoding into the same message shapes, and create() and clone() without descriptors.\n * The table at the end holds them by message name; importing this module changes nothing else.${notes}\n */\n`,
    );
    for (const m of plan.reached) print(emitEncoder(m) + emitDecoder(m) + emitCreate(m) + emitClone(m));
    for (const m of plan.exported) {
      const name = f.importShape(m).name;
      const id = idOf(m);
      print(
        [
          `/** Encodes a ${m.typeName} (or an init object of one) to the bytes protobuf-es toBinary writes. */`,
          `export function encode${name}(message: @t{MessageInitShape}<typeof @S{${m.typeName}}>): Uint8Array {`,
          `  const m = message as ${shapeRef(m)};`,
          "  let buf = @{scratchBuffer}(0);",
          `  let end = write_${id}(m, buf, 0);`,
          "  // Past the end of the scratch buffer nothing was stored: again, in one that holds it.",
          `  if (end > buf.length) end = write_${id}(m, (buf = @{scratchBuffer}(end)), 0);`,
          "  return @{takeEncoding}(buf, end);",
          "}",
          "",
          `/** Decodes a ${m.typeName}; malformed bytes throw DecodeError naming the message and field. */`,
          `export function decode${name}(bytes: Uint8Array): ${shapeRef(m)} {`,
          `  return read_${id}(new @{Reader}(bytes), new_${id}());`,
          "}",
          "",
        ].join("\n"),
      );
    }
    const table = f.importSchema(file, true).name.replace(/^file_/u, "messages_");
    const names = plan.exported.map((m) => ({ m, name: f.importShape(m).name }));
    print(`/** The generated code of the messages of ${file.proto.name} above, by message name. */`);
    print(`export const ${table}: {`);
    for (const { m, name } of names) print(`  readonly ${name}: @w{GeneratedMessage}<typeof @S{${m.typeName}}>;`);
    print("} = {");
    for (const { m, name } of names) {
      const id = idOf(m);
      print(`  ${name}: { typeName: "${m.typeName}", encode: encode${name}, decode: decode${name}, create: create_${id}, clone: clone_${id}, fields: () => ${fieldsLiteral(m)} },`);
    }
    print("};");
  }
}

/** protoc-gen-nri-wire: non-reflective binary codecs for protobuf-es message shapes. */
export const protocGenNriWire = createEcmaScriptPlugin<Options>({
  name: "protoc-gen-nri-wire",
  version: "v0.1.0",
  parseOptions,
  generateTs,
});
