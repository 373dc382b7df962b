import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { GoTextKey } from "../interop/go-texts.js";

/** Where the Go runtime's texts are recorded (see test/interop/go-texts.ts). */
export const GO_TEXTS_FILE = resolve(import.meta.dirname, "../fixtures/go-texts/runtime.json");

let recorded: Record<string, string> | undefined;

/**
 * The Go runtime's text recorded under `key`, for tests that assert Go's words without running
 * Go; `names` swaps names of the recorded scenario for the test's own (`{ "80-v1": "90-v" }`).
 */
export function goText(key: GoTextKey, names: Record<string, string> = {}): string {
  recorded ??= JSON.parse(readFileSync(GO_TEXTS_FILE, "utf8")) as Record<string, string>;
  const text = recorded[key];
  if (text === undefined) throw new Error(`test: no Go text "${key}" in ${GO_TEXTS_FILE}: record it (test/interop/go-texts.ts)`);
  return Object.entries(names).reduce((t, [from, to]) => t.replaceAll(from, to), text);
}
