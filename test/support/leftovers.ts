import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A vitest global setup: the run gets a temporary directory of its own (TMPDIR, inherited by
 * every worker and every process the tests start, Go included), and after the run whatever is
 * left in it fails the run, named (the directory is then kept for a look). Tests remove what
 * they make (test/support/temp.ts does it for the directories it hands out). Tool caches that
 * live in the temporary directory on purpose are not the tests' and are let be.
 */

/** Entries made by the tools, not by the tests: tsx's compile cache, Node's module compile cache. */
export const TOOL_CACHES: readonly RegExp[] = [/^tsx-\d+$/u, /^node-compile-cache$/u];

export default function setup(): () => void {
  const outer = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), "nri-wire-test-"));
  process.env.TMPDIR = root;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    const left = readdirSync(root).filter((name) => !TOOL_CACHES.some((re) => re.test(name)));
    if (left.length === 0) return rmSync(root, { recursive: true, force: true });
    // Kept for a look (a failed soak keeps its logs there); the next run has a directory of its own.
    const message = `test: the run left ${left.length} entr${left.length === 1 ? "y" : "ies"} in its temporary directory ${root}: ${left.sort().join(", ")}`;
    console.error(`\n${message}`);
    throw new Error(message);
  };
}
