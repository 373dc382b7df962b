// @ts-check
/**
 * A typedoc plugin: names each entry point's module by the import path users write
 * (`nri-wire/plugin`), taken from package.json's exports, instead of by its file path.
 */
import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { Converter, ReflectionKind } from "typedoc";

const ROOT = resolve(import.meta.dirname, "../..");

/** src/… .ts file (relative to the root) → import path, from package.json's exports. */
function importPaths() {
  const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8"));
  /** @type {Map<string, string>} */
  const names = new Map();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const source = target.types.replace(/^\.\/dist\//u, "").replace(/\.d\.ts$/u, ".ts");
    names.set(source, subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`);
  }
  return names;
}

/** @param {import("typedoc").Application} app */
export function load(app) {
  const names = importPaths();
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.Module)) return;
    const file = context.getSymbolFromReflection(reflection)?.declarations?.[0]?.getSourceFile().fileName;
    if (file === undefined) return;
    const name = names.get(relative(ROOT, file));
    if (name === undefined) throw new Error(`typedoc: entry point ${relative(ROOT, file)} is not in package.json's exports`);
    reflection.name = name;
  });
}
