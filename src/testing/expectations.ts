import { type DescMessage, type JsonValue, fromJson, toJson } from "@bufbuild/protobuf";
import { Plugin } from "../../gen/v1beta1/api_pb.js";

/*
 * What a plugin is expected to answer, per event, for `nri-wire test-plugin --expect`: an answer
 * (exactly, or as a subset) or a refusal. Answers are compared as protobuf JSON of the v1beta1
 * response type, after the expectation itself went through that type (so `"limit": 1024` and
 * `"limit": "1024"` are the same, and a misspelt field is an error naming it).
 */

/** How an expected answer is compared: field for field, or only the fields it names. */
export type MatchMode = "exact" | "subset";

/** What one event is expected to be answered with. */
export type Expectation =
  | { readonly answer: JsonValue; readonly match: MatchMode }
  /** A refusal: the call fails (or a validator rejects) with a message containing this text ("" for any). */
  | { readonly refusal: string };

/**
 * Expectations by v1beta1 method name (`CreateContainer`): one for every call of the event, or
 * one per call in the order the script sends them (a call past the list is not checked).
 */
export type Expectations = ReadonlyMap<string, Expectation | readonly Expectation[]>;

/** The expectation for the `n`-th call (from 0) of `method`, if any. */
export function expectationFor(expectations: Expectations | undefined, method: string, n: number): Expectation | undefined {
  const e = expectations?.get(method);
  return Array.isArray(e) ? e[n] : (e as Expectation | undefined);
}

/** The expectations file's format, documented in `nri-wire test-plugin --help`. */
export const EXPECTATIONS_FORMAT = `An expectations file (--expect) is JSON: for each event by method name, what the plugin answers
it with, checked on every call of that event in every dialect (the answers check):
  {"answer": {...}}                      the response (protobuf JSON, v1beta1 field names), exactly
  {"answer": {...}, "match": "subset"}   only the fields given (objects by key, list items in
                                         any order, each matching an item of its own)
  {"refusal": "TEXT"}                    a refusal: the call fails, or a validator rejects, with a
                                         message containing TEXT ("" for any); a refusal expected
                                         is no failure of the events check
  [{...}, {...}]                         one of those per call, in the order the script sends them
                                         (Synchronize: the two pages, then the one after the restart)
For example: {"CreateContainer": {"answer": {"adjust": {"env": [{"key": "POD", "value": "web"}]}},
"match": "subset"}, "ValidateContainerAdjustment": {"refusal": "not allowed"}}`;

/** The v1beta1 Plugin methods an expectation may name, by wire name, with their response type. */
const METHODS = new Map(Object.values(Plugin.method).map((m) => [m.name, m.output] as const));

function isObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Expectations from an expectations file's parsed JSON; throws naming the method and what is wrong. */
export function parseExpectations(json: unknown): Expectations {
  if (!isObject(json)) throw new Error("expectations: not a JSON object");
  const out = new Map<string, Expectation | Expectation[]>();
  for (const [method, e] of Object.entries(json)) {
    const output = METHODS.get(method);
    if (output === undefined) throw new Error(`expectations: unknown event "${method}": use ${[...METHODS.keys()].join(", ")}`);
    out.set(method, Array.isArray(e) ? e.map((x, i) => expectation(output, x, `expectations: ${method}[${i}]`)) : expectation(output, e, `expectations: ${method}`));
  }
  return out;
}

function expectation(output: DescMessage, e: unknown, where: string): Expectation {
  if (!isObject(e)) throw new Error(`${where}: not a JSON object`);
  for (const k of Object.keys(e)) if (!["answer", "match", "refusal"].includes(k)) throw new Error(`${where}: unknown key "${k}": use answer, match, refusal`);
  if ((e.answer === undefined) === (e.refusal === undefined)) throw new Error(`${where}: give either answer or refusal`);
  if (e.refusal !== undefined) {
    if (typeof e.refusal !== "string") throw new Error(`${where}: refusal: not a string`);
    if (e.match !== undefined) throw new Error(`${where}: match goes with answer, not refusal`);
    return { refusal: e.refusal };
  }
  const match = e.match ?? "exact";
  if (match !== "exact" && match !== "subset") throw new Error(`${where}: match: "${String(match)}" is not exact or subset`);
  try {
    // Through the response type and back: checks the names and writes values one way.
    return { answer: toJson(output, fromJson(output, e.answer!)), match };
  } catch (x) {
    throw new Error(`${where}: answer: ${(x as Error).message}`);
  }
}

function show(v: JsonValue | undefined): string {
  return v === undefined ? "nothing" : JSON.stringify(v);
}

function key(path: string, k: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/u.test(k) ? (path === "" ? k : `${path}.${k}`) : `${path}[${JSON.stringify(k)}]`;
}

/** Whether `actual` holds everything `expected` has (the subset rule). */
function holds(expected: JsonValue, actual: JsonValue | undefined): boolean {
  return diffJson(expected, actual, "subset", "").length === 0;
}

/**
 * The differences of `actual` from `expected`, one line per path (`adjust.env[0].value: expected
 * "1", got "2"`); none when it matches.
 */
export function diffJson(expected: JsonValue | undefined, actual: JsonValue | undefined, mode: MatchMode, path = ""): string[] {
  const at = path === "" ? "the answer" : path;
  if (isObject(expected) && isObject(actual)) {
    const lines: string[] = [];
    for (const [k, v] of Object.entries(expected)) lines.push(...diffJson(v, actual[k], mode, key(path, k)));
    if (mode === "exact") for (const [k, v] of Object.entries(actual)) if (!(k in expected)) lines.push(`${key(path, k)}: expected nothing, got ${show(v)}`);
    return lines;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (mode === "exact") {
      const lines: string[] = [];
      for (let i = 0; i < Math.max(expected.length, actual.length); i++) lines.push(...diffJson(expected[i], actual[i], mode, `${path}[${i}]`));
      return lines;
    }
    // Each expected item matches an item of its own, in any order.
    const free = actual.map((_, i) => i);
    const lines: string[] = [];
    for (const [i, item] of expected.entries()) {
      const j = free.findIndex((f) => holds(item, actual[f]));
      if (j < 0) lines.push(`${path}[${i}]: expected an item holding ${show(item)}, got none among ${show(actual)}`);
      else free.splice(j, 1);
    }
    return lines;
  }
  if (expected === undefined && actual === undefined) return [];
  if (JSON.stringify(expected) === JSON.stringify(actual)) return [];
  return [`${at}: expected ${show(expected)}, got ${show(actual)}`];
}

/** What one call was answered with, as the report shows it. */
export interface AnswerOutcome {
  /** The response as protobuf JSON, when the plugin answered. */
  readonly answer?: JsonValue;
  /** The error the call failed with, or a validator's rejection reason, when it refused. */
  readonly refusal?: string;
}

/** The lines saying how `outcome` differs from `e`; none when it is as expected. */
export function judge(e: Expectation, outcome: AnswerOutcome): string[] {
  if ("refusal" in e) {
    if (outcome.refusal === undefined) return [`expected a refusal${e.refusal === "" ? "" : ` containing ${JSON.stringify(e.refusal)}`}, got the answer ${show(outcome.answer)}`];
    return outcome.refusal.includes(e.refusal) ? [] : [`expected a refusal containing ${JSON.stringify(e.refusal)}, got ${JSON.stringify(outcome.refusal)}`];
  }
  if (outcome.answer === undefined) return [`expected ${e.match === "subset" ? "an answer holding" : "the answer"} ${show(e.answer)}, got the refusal ${JSON.stringify(outcome.refusal ?? "")}`];
  return diffJson(e.answer, outcome.answer ?? {}, e.match);
}
