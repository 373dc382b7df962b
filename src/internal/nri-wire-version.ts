import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

/**
 * This package's version, from the package.json above this file (in src/ or dist/src/): the one
 * place it is written. "unknown" when no nri-wire package.json is found (a bundle).
 */
export function nriWireVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = join(dir, "package.json");
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "nri-wire") return (cached = pkg.version ?? "unknown");
    }
    const up = dirname(dir);
    if (up === dir) return (cached = "unknown");
    dir = up;
  }
}
