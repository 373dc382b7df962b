import type { Scenario } from "./diff-scenarios.js";

/**
 * The output lines of the differential drivers: one JSON object per line, keys sorted. Both
 * drivers print them and the comparison parses and prints them again with `canonicalJson`, so
 * only content counts, never formatting.
 */

/** JSON text of `v` with every object's keys in code-unit order (integer-like keys too). */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") {
    const s = JSON.stringify(v);
    if (s === undefined) throw new Error(`diff: cannot print ${typeof v} as JSON`);
    return s;
  }
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : canonicalJson(x))).join(",")}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(",")}}`;
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Go appends a plugin's mount removal markers that match no addition in map order: within
 * every run of consecutive markers (destination starting with "-"), sort by destination.
 */
function sortMarkerRuns(mounts: unknown[]): unknown[] {
  const out = [...mounts];
  const isMarker = (m: unknown): boolean => isObject(m) && typeof m.destination === "string" && m.destination.startsWith("-");
  for (let i = 0; i < out.length; ) {
    if (!isMarker(out[i])) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && isMarker(out[j])) j++;
    const run = out.slice(i, j).sort((a, b) => byText((a as JsonObject).destination as string, (b as JsonObject).destination as string));
    out.splice(i, run.length, ...run);
    i = j;
  }
  return out;
}

/** Applies `f` to every value below `v` (objects and arrays rebuilt, leaves kept). */
function walk(v: unknown, f: (key: string, value: unknown) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => walk(x, f));
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) out[k] = f(k, walk(x, f));
  return out;
}

/**
 * One line made comparable: parsed, normalized where Go is not deterministic (DIFF.md), and
 * printed canonically.
 * - mount removal markers: runs sorted (Go map order);
 * - the namespaces of the container a CreateContainer plugin receives: sorted by type (Go
 *   rebuilds that list from a map once a plugin adjusted namespaces);
 * - errors and logged lines of a scenario's `equivalentErrors` set: replaced by the set's first
 *   (several validators rejecting at once: Go reports whichever finished first); logged lines
 *   sorted again after;
 * - `proto:` and a no-break space, which protobuf-go puts in its errors instead of a space in
 *   some builds (on purpose, so that nobody matches them): a space.
 */
export function normalizeLine(line: string, scenario: Scenario): string {
  let v: unknown;
  try {
    v = JSON.parse(line.replaceAll("proto:\u00a0", "proto: "));
  } catch {
    return `not JSON: ${line}`;
  }
  v = walk(v, (k, x) => (k === "mounts" && Array.isArray(x) ? sortMarkerRuns(x) : x));
  if (isObject(v) && isObject(v.record) && v.record.method === "CreateContainer") {
    const linux = (v.record.request as { container?: { linux?: { namespaces?: unknown } } } | undefined)?.container?.linux;
    if (linux && Array.isArray(linux.namespaces)) {
      linux.namespaces = [...linux.namespaces].sort((a, b) => byText(canonicalJson(a), canonicalJson(b)));
    }
  }
  const equivalent = (text: string): string => scenario.equivalentErrors?.find((s) => s.includes(text))?.[0] ?? text;
  if (isObject(v) && typeof v.error === "string") v.error = equivalent(v.error);
  if (isObject(v) && typeof v.log === "string" && Array.isArray(v.lines)) v.lines = (v.lines as string[]).map((l) => equivalent(l)).sort(byText);
  return canonicalJson(v);
}

/**
 * Go runs validators at once, and their metrics lines interleave in whatever order they finish:
 * every run of consecutive ValidateContainerAdjustment metrics lines is sorted.
 */
export function sortValidatorMetrics(lines: readonly string[]): string[] {
  const out = [...lines];
  const isValidatorMetric = (l: string | undefined): boolean => l !== undefined && l.includes('"metric":') && l.includes('"op":"ValidateContainerAdjustment"');
  for (let i = 0; i < out.length; ) {
    if (!isValidatorMetric(out[i])) {
      i++;
      continue;
    }
    let j = i;
    while (isValidatorMetric(out[j])) j++;
    out.splice(i, j - i, ...out.slice(i, j).sort(byText));
    i = j;
  }
  return out;
}

/** The runtime's log lines, by level, as a driver prints them last: `{"log": level, "lines": [...]}`. */
export type LogLines = Record<string, string[]>;

/** A driver's output split into the runtime's log lines (by level) and the other lines. */
export function splitLogs(lines: readonly string[]): { rest: string[]; logs: LogLines } {
  const rest: string[] = [];
  const logs: LogLines = {};
  for (const line of lines) {
    const v: unknown = line.startsWith('{"lines":') ? JSON.parse(line) : undefined;
    if (isObject(v) && typeof v.log === "string" && Array.isArray(v.lines)) logs[v.log] = v.lines as string[];
    else rest.push(line);
  }
  return { rest, logs };
}

/** A readable account of where two line lists first differ, with the lines around it. */
export function describeDifference(goLines: readonly string[], tsLines: readonly string[]): string {
  const n = Math.max(goLines.length, tsLines.length);
  let first = 0;
  while (first < n && goLines[first] === tsLines[first]) first++;
  if (first === n) return "no difference";
  const out = [`first difference at line ${first + 1} (Go ${goLines.length} lines, TypeScript ${tsLines.length} lines):`];
  for (let i = Math.max(0, first - 2); i < first; i++) out.push(`  = ${goLines[i]}`);
  for (let i = first; i < Math.min(n, first + 4); i++) {
    if (goLines[i] === tsLines[i]) out.push(`  = ${goLines[i]}`);
    else out.push(`  go: ${goLines[i] ?? "(none)"}`, `  ts: ${tsLines[i] ?? "(none)"}`);
  }
  return out.join("\n");
}
