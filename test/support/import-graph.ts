import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";

/*
 * What importing a module loads, read from the JavaScript tsc emits for each module (so
 * type-only imports, which emit nothing, do not count, and `import { type X }` does).
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
export function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
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
