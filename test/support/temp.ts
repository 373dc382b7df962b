import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Temporary directories of the tests and the benches. Each is removed with everything in it
 * after the test file that made it (test/support/setup.ts), so a file may use one from any of its
 * tests and hooks; test/support/leftovers.ts fails the run if anything is left in the temporary
 * directory. A process that is not a test run (a bench, a script) removes them when it exits.
 */

const made: string[] = [];
let removedAtExit = false;

/** A fresh directory in the temporary directory, removed after the test file or at exit (names stay short: unix socket paths are limited to 108 bytes). */
export function tempDir(prefix = "nriw-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  if (!removedAtExit) {
    removedAtExit = true;
    process.once("exit", removeTempDirs);
  }
  return dir;
}

/** Removes every directory tempDir made so far; setup.ts calls it after each test file. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
