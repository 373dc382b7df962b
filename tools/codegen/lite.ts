import type { DescEnum, DescFile, DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import type { GeneratedFile } from "@bufbuild/protoplugin";

/*
 * X_lite.ts: the exports of protoc-gen-es's X_pb.ts, for programs that should not decode the
 * file's descriptor at import. Types are the same types; enums are the same objects' contents
 * (a TypeScript enum is a plain object of names and numbers); every schema is a lazy stand-in
 * that loads X_pb.ts on first use (see src/wire/lazy.ts); and each service gets a table of its
 * methods by name, so that an endpoint can dispatch without a service descriptor.
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

/** Writes the lite module of `file`; `wire` is where the wire runtime is imported from. */
export function emitLite(f: GeneratedFile, file: DescFile, wire: string): void {
  const fileSymbol = f.importSchema(file).name;
  f.preamble(file);
  f.print("/*");
  f.print(` * The exports of ${file.name}_pb.ts without decoding its descriptor at import: the same types`);
  f.print(" * and enum values, schemas that load it on first use, and the methods of each service.");
  f.print(" */");
  f.print();
  const base = file.name.slice(file.name.lastIndexOf("/") + 1);
  f.print("const lazy = ", f.import("lazySchemas", wire), `(${JSON.stringify(file.proto.name)}, import.meta.url, "./${base}_pb.js");`);
  f.print();
  f.print(`/** Describes the file ${file.proto.name}; loaded on first use. */`);
  f.print(f.export("const", fileSymbol), ": typeof ", f.importSchema(file, true), ` = lazy("${fileSymbol}", "file");`);
  for (const t of nestedTypes(file)) {
    const schema = f.importSchema(t, true);
    const name = schema.name;
    f.print();
    switch (t.kind) {
      case "message": {
        const shape = f.importShape(t).toTypeOnly();
        f.print(f.jsDoc(t));
        f.print(f.export("type", shape.name), " = ", shape, ";");
        f.print(`/** Describes the message ${t.typeName}; loaded on first use. Use \`create(${name})\` to create a new message. */`);
        f.print(f.export("const", name), ": typeof ", schema, ` = lazy("${name}", "message", "${t.typeName}");`);
        break;
      }
      case "enum": {
        const shape = f.importShape(t).toTypeOnly();
        f.print(f.jsDoc(t));
        f.print(f.export("type", shape.name), " = ", shape, ";");
        f.print(f.jsDoc(t));
        f.print(f.export("const", shape.name), " = ", enumObject(t), " as unknown as typeof ", shape, ";");
        f.print(`/** Describes the enum ${t.typeName}; loaded on first use. */`);
        f.print(f.export("const", name), ": typeof ", schema, ` = lazy("${name}", "enum", "${t.typeName}");`);
        break;
      }
      case "extension":
        f.print(f.jsDoc(t));
        f.print(f.export("const", name), ": typeof ", schema, ` = lazy("${name}", "extension", "${t.typeName}");`);
        break;
      case "service":
        f.print(f.jsDoc(t));
        f.print(f.export("const", name), ": typeof ", schema, ` = lazy("${name}", "service", "${t.typeName}");`);
        break;
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
