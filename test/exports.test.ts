import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Each entry point's export list, pinned in test/fixtures/exports.json: adding, removing or
 * renaming an export is a visible change to that file. `NRI_WIRE_UPDATE_EXPORTS=1` rewrites it.
 */

const ROOT = resolve(import.meta.dirname, "..");
const PINNED = resolve(ROOT, "test/fixtures/exports.json");

interface Conditions {
  types: string;
  import?: string;
  default?: string;
}

/** package.json's subpaths and the source file behind each. */
function entries(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as { exports: Record<string, Conditions> };
  const out = new Map<string, string>();
  for (const [subpath, c] of Object.entries(pkg.exports)) {
    const source = c.types.replace(/^\.\/dist\//u, "").replace(/\.d\.ts$/u, ".ts");
    out.set(subpath === "." ? "nri-wire" : `nri-wire/${subpath.slice(2)}`, source);
  }
  return out;
}

/** The exported names of every entry, sorted. */
function exportLists(): Record<string, string[]> {
  const files = entries();
  const program = ts.createProgram(
    [...files.values()].map((f) => resolve(ROOT, f)),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const out: Record<string, string[]> = {};
  for (const [name, file] of files) {
    const source = program.getSourceFile(resolve(ROOT, file));
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (symbol === undefined) throw new Error(`exports: no module for ${name} (${file})`);
    out[name] = checker.getExportsOfModule(symbol).map((s) => s.getName()).sort();
  }
  return out;
}

describe("entry points", () => {
  const lists = exportLists();

  it("export exactly the pinned names", () => {
    if (process.env.NRI_WIRE_UPDATE_EXPORTS === "1") writeFileSync(PINNED, `${JSON.stringify(lists, null, 2)}\n`);
    const pinned = JSON.parse(readFileSync(PINNED, "utf8")) as Record<string, string[]>;
    expect(lists).toEqual(pinned);
  });

  it("carry no codec functions, no descriptors and no internals", () => {
    for (const entry of ["nri-wire", "nri-wire/plugin", "nri-wire/runtime", "nri-wire/testing"]) {
      const names = lists[entry] ?? [];
      expect(names.filter((n) => /^(encode|decode)[A-Z]/u.test(n) || /^file_/u.test(n) || n === "MaybePromise"), entry).toEqual([]);
    }
  });

  it("give the plugin and the runtime author the errors and their codes", () => {
    for (const entry of ["nri-wire/plugin", "nri-wire/runtime"]) {
      expect(lists[entry], entry).toEqual(expect.arrayContaining(["RpcError", "Code", "NriCallError", "DecodeError", "Revision", "Logger", "PluginHandlers", "ContainerAdjustment", "CreateContainerRequest", "Event"]));
    }
  });
});
