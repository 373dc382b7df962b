import type { DescEnum, DescFile, DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import type { GeneratedFile } from "@bufbuild/protoplugin";

/*
 * X_lite.ts: what a program takes from protoc-gen-es's X_pb.ts when it should not load
 * @bufbuild/protobuf nor decode the file's descriptor: the message and enum types (the same
 * types), the enums (a TypeScript enum is a plain object of names and numbers; the package entries
 * export this object under the enum's name, so there is one per enum), and each service's methods
 * by name, so that an endpoint can dispatch without a service descriptor. No schema: a schema is
 * the descriptor, and X_pb.ts is where it comes from.
 */

function enumObject(e: DescEnum): string {
  const entries: string[] = [];
  for (const v of e.values) entries.push(`${JSON.stringify(v.localName)}: ${v.number}`);
  for (const v of e.values) entries.push(`${JSON.stringify(String(v.number))}: ${JSON.stringify(v.localName)}`);
  return `{ ${entries.join(", ")} }`;
}

function serviceTable(s: DescService): string {
  const methods = s.methods.map(
    (m) => `      { name: "${m.name}", localName: "${m.localName}", kind: "${m.methodKind}", input: "${m.input.typeName}", output: "${m.output.typeName}" },`,
  );
  return [`  ${s.name}: {`, `    typeName: "${s.typeName}",`, "    methods: [", ...methods, "    ],", "  },"].join("\n");
}

/** Writes the lite module of `file`. */
export function emitLite(f: GeneratedFile, file: DescFile): void {
  const fileSymbol = f.importSchema(file).name;
  f.preamble(file);
  f.print("/*");
  f.print(` * The types, enums and service methods of ${file.name}_pb.ts, without loading @bufbuild/protobuf`);
  f.print(" * nor decoding the file's descriptor: the schemas are in the _pb module.");
  f.print(" */");
  for (const t of nestedTypes(file)) {
    if (t.kind !== "message" && t.kind !== "enum") continue;
    const shape = f.importShape(t).toTypeOnly();
    f.print();
    f.print(f.jsDoc(t));
    f.print(f.export("type", shape.name), " = ", shape, ";");
    if (t.kind === "enum") {
      f.print(f.jsDoc(t));
      f.print(f.export("const", shape.name), " = ", enumObject(t), " as unknown as typeof ", shape, ";");
      // The members as types too (`Event.CREATE_CONTAINER`), as the enum declaration gives them.
      f.print(f.export("declare namespace", shape.name), " {");
      for (const v of t.values) {
        f.print(`  /** ${shape.name}.${v.localName} (${v.number}) as a type. */`);
        f.print(`  type ${v.localName} = `, shape, `.${v.localName};`);
      }
      f.print("}");
    }
  }
  const services = [...nestedTypes(file)].filter((t): t is DescService => t.kind === "service");
  if (services.length > 0) {
    f.print();
    f.print(`/** The methods of each service of ${file.proto.name}, with the full names of their input and output types. */`);
    f.print(f.export("const", fileSymbol.replace(/^file_/u, "services_")), " = {");
    for (const s of services) f.print(serviceTable(s));
    f.print("} as const;");
  }
}
