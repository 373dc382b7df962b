import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layers of src/, lowest first. A module may import its own layer's folder and any lower
 * layer, never a higher one nor another folder of its own layer (the mux does not know ttrpc; the
 * plugin side, the runtime side and the capture tools do not know each other). docs/architecture.md
 * draws the same table.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["src/internal"],
  ["src/wire"],
  ["gen"],
  ["src/ttrpc", "src/mux"],
  ["src/api"],
  ["src/translate", "src/v1alpha1.ts", "src/v1beta1.ts", "src/index.ts"],
  ["src/plugin", "src/runtime", "src/capture"],
  ["src/testing", "src/ship"],
  ["src/cli"],
];

const ROOT = resolve(import.meta.dirname, "..");

/** The layer entry `file` (relative to the root) belongs to, or undefined outside src/ and gen/. */
function placeOf(file: string): { layer: number; unit: string } | undefined {
  for (const [layer, units] of LAYERS.entries()) {
    for (const unit of units) if (file === unit || file.startsWith(`${unit}/`)) return { layer, unit };
  }
  return undefined;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)["'](\.{1,2}\/[^"']+)["']/gmu;

/** Every relative import of `file`, as a path relative to the root with the .ts ending. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(SPECIFIER)].map((m) => relative(ROOT, resolve(ROOT, dirname(file), m[1]!)).replace(/\.js$/u, ".ts"));
}

/** `file -> target` when that import runs up the layers or across one. */
function violation(file: string, target: string): string[] {
  const from = placeOf(file);
  if (from === undefined) return [];
  const to = placeOf(target);
  if (to === undefined) return [`${file} -> ${target}: outside the layers`];
  return to.unit !== from.unit && to.layer >= from.layer ? [`${file} -> ${target}`] : [];
}

describe("layers", () => {
  it("no module of src/ imports a higher layer, another folder of its own layer, or anything outside src/ and gen/", () => {
    const files = [...sources("src"), ...sources("gen")];
    const imports = files.flatMap((f) => importsOf(f).map((t) => [f, t] as const));
    expect(imports.length).toBeGreaterThan(300);
    expect(imports.flatMap(([f, t]) => violation(f, t))).toEqual([]);
  });

  it("the check sees an upward or sideways import", () => {
    expect(importsOf("src/mux/mux.ts")).toContain("src/internal/errors.ts");
    expect(violation("src/mux/mux.ts", "src/ttrpc/errors.ts")).toEqual(["src/mux/mux.ts -> src/ttrpc/errors.ts"]);
    expect(violation("src/wire/reader.ts", "src/runtime/index.ts")).toEqual(["src/wire/reader.ts -> src/runtime/index.ts"]);
    expect(violation("src/plugin/plugin.ts", "tools/codegen/plugin.ts")).toEqual(["src/plugin/plugin.ts -> tools/codegen/plugin.ts: outside the layers"]);
    expect(violation("src/runtime/index.ts", "src/wire/reader.ts")).toEqual([]);
  });
});
