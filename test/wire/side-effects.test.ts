import { readFileSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/*
 * package.json declares which modules have an effect when loaded (`sideEffects`: the CLI entry,
 * which runs when it is the program); for every other module, importing it must change nothing a
 * program could see. Read from the source: no statement at the top level other than imports,
 * exports and declarations (no call, assignment or registration), and no import for its effect
 * alone (`import "./x.js"`). Declarations may compute their values; those stay the module's own.
 */

const ROOT = resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The top-level statements of `file` that may act when it loads, as `file:line: text`. */
function effects(file: string, text: string = readFileSync(join(ROOT, file), "utf8")): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  for (const s of sf.statements) {
    const quiet =
      (ts.isImportDeclaration(s) && s.importClause !== undefined) ||
      ts.isImportEqualsDeclaration(s) ||
      ts.isExportDeclaration(s) ||
      ts.isExportAssignment(s) ||
      ts.isFunctionDeclaration(s) ||
      ts.isClassDeclaration(s) ||
      ts.isInterfaceDeclaration(s) ||
      ts.isTypeAliasDeclaration(s) ||
      ts.isEnumDeclaration(s) ||
      ts.isModuleDeclaration(s) ||
      ts.isVariableStatement(s) ||
      ts.isEmptyStatement(s);
    if (!quiet) out.push(`${file}:${sf.getLineAndCharacterOfPosition(s.getStart()).line + 1}: ${s.getText().split("\n")[0]}`);
  }
  return out;
}

/** The source modules package.json says have effects (its entries name the built files). */
function declared(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { sideEffects: string[] };
  return pkg.sideEffects.map((p) => p.replace(/^\.\/dist\//u, "").replace(/\.js$/u, ".ts"));
}

describe("side effects of loading a module", () => {
  it("only the modules package.json lists as having side effects act when loaded", () => {
    const files = [...sources("src"), ...sources("gen")].filter((f) => !f.endsWith(".d.ts"));
    expect(files.length).toBeGreaterThan(100);
    const acting = files.filter((f) => effects(f).length > 0);
    expect(acting).toEqual(declared());
  });

  it("the check sees a registration call, an assignment and an import for its effect", () => {
    const text = ['import "./codec.js";', 'import { a } from "./a.js";', "registerMessages([a]);", "globalThis.x = 1;", "export const y = f();"].join("\n");
    expect(effects("x.ts", text)).toEqual(['x.ts:1: import "./codec.js";', "x.ts:3: registerMessages([a]);", "x.ts:4: globalThis.x = 1;"]);
  });
});
