import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/*
 * What importing nri-wire/plugin loads, read from the JavaScript tsc emits for each module (so
 * type-only imports, which emit nothing, do not count, and `import { type X }` does). A plugin
 * must not pay at import for what it does not use: no @bufbuild/protobuf (its registry, JSON and
 * descriptor decoding), no protoc-gen-es module (each decodes its file's descriptor), nothing of
 * v1alpha1 (translation is imported when a v1alpha1 runtime first calls), nothing of the runtime
 * side. Messages are made and coded by generated code alone: the plugin's registry has no
 * reflective fallback, so nothing could load the package later either.
 */

const ROOT = resolve(import.meta.dirname, "../..");

const options: ts.CompilerOptions = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  verbatimModuleSyntax: true,
};

/** Module specifiers a file's emitted JavaScript imports statically. */
function importsOf(file: string): string[] {
  const js = ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions: options, fileName: file }).outputText;
  const out: string[] = [];
  for (const m of js.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gmu)) out.push((m[1] ?? m[2])!);
  return out;
}

/** Every module reached from `entry`: project files relative to the root, packages by name. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    const rel = relative(ROOT, file);
    if (files.has(rel)) return;
    files.add(rel);
    for (const spec of importsOf(file)) {
      if (spec.startsWith("node:")) continue;
      if (!spec.startsWith(".")) {
        packages.add(spec);
        continue;
      }
      const target = resolve(dirname(file), spec).replace(/\.js$/u, ".ts");
      if (!existsSync(target)) throw new Error(`test: ${rel} imports ${spec}, not found as ${relative(ROOT, target)}`);
      visit(target);
    }
  };
  visit(resolve(ROOT, entry));
  return { files, packages };
}

describe("importing nri-wire/plugin", () => {
  const { files, packages } = importGraph("src/plugin/index.ts");

  it("reaches the endpoint, ttrpc, the mux and the v1beta1 generated codecs (the walk sees the graph)", () => {
    for (const f of [
      "src/plugin/plugin.ts",
      "src/ttrpc/server.ts",
      "src/ttrpc/client.ts",
      "src/mux/mux.ts",
      "src/plugin/helpers/adjustment.ts",
      "src/api/messages.ts",
      "src/wire/registry.ts",
      "gen/v1beta1/api_codec.ts",
      "gen/v1beta1/api_lite.ts",
    ]) {
      expect(files).toContain(f);
    }
  });

  it("loads no package, now or later: not even the reflective fallback of @bufbuild/protobuf", () => {
    expect([...packages]).toEqual([]);
    expect(files).not.toContain("src/wire/reflection.ts");
  });

  it("decodes no descriptor: no protoc-gen-es module of any file", () => {
    expect([...files].filter((f) => f.endsWith("_pb.ts"))).toEqual([]);
  });

  it("holds nothing of v1alpha1 and no translation, and nothing of the runtime side", () => {
    expect([...files].filter((f) => f.startsWith("gen/v1alpha1/"))).toEqual([]);
    expect([...files].filter((f) => f.startsWith("src/translate/"))).toEqual([]);
    expect([...files].filter((f) => f.startsWith("src/runtime/") || f.startsWith("src/testing/"))).toEqual([]);
  });

  it("the walk does see what a type-only import would hide: nri-wire/v1beta1 reaches protoc-gen-es and @bufbuild/protobuf", () => {
    const full = importGraph("src/v1beta1.ts");
    expect(full.files).toContain("gen/v1beta1/api_pb.ts");
    expect(full.packages).toContain("@bufbuild/protobuf/codegenv2");
    expect(importGraph("src/wire/reflection.ts").packages).toEqual(new Set(["@bufbuild/protobuf"]));
  });
});
