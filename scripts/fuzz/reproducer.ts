import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { type JsonValue, inputFromJson, inputToJson } from "./input-json.js";
import type { FindingReport } from "./run.js";
import type { FuzzTarget, Input } from "./target.js";

/** A finding as saved: the input itself, so it replays without the corpus or the RNG. */
export interface Reproducer {
  readonly target: string;
  readonly message: string;
  /** The command that replays it, from the repository's root. */
  readonly replay: string;
  /** Where it came from: seed and input index of the run, the commit and Node it ran on. */
  readonly found: { readonly seed: number; readonly index: number; readonly commit: string; readonly node: string; readonly date: string };
  readonly input: Input;
  /** The input as found, when `input` is a minimized one. */
  readonly original?: Input;
}

/** The command replaying the reproducer at `file`. */
export const replayCommand = (file: string): string => `npm run fuzz -- --replay ${relative(process.cwd(), file)}`;

/** Writes a file whole or not at all (a kill between two writes leaves the old one). */
export function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** Saves a finding under `dir` as `<target>-<index>.json`; returns the file's path. */
export function saveReproducer(dir: string, f: FindingReport, found: Omit<Reproducer["found"], "index" | "date">): string {
  const file = `${dir}/${slug(f.target)}-${f.index}.json`;
  const r: Omit<Reproducer, "input"> & { input: Record<string, JsonValue> } = {
    target: f.target,
    message: f.message,
    replay: replayCommand(file),
    found: { ...found, index: f.index, date: new Date().toISOString() },
    input: inputToJson(f.input),
  };
  writeAtomic(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}

/** Reads a reproducer file. */
export function loadReproducer(file: string): Reproducer {
  const j = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  if (typeof j.target !== "string" || typeof j.message !== "string") throw new Error(`fuzz: ${file} is not a reproducer (no target or message)`);
  return {
    ...(j as unknown as Reproducer),
    input: inputFromJson(j.input, `${file}: input`),
    ...(j.original === undefined ? {} : { original: inputFromJson(j.original, `${file}: original`) }),
  };
}

/** Rewrites a reproducer with a smaller input, keeping the one found as `original`. */
export function saveMinimized(file: string, r: Reproducer, input: Input): void {
  const out = { ...r, input: inputToJson(input), original: inputToJson(r.original ?? r.input) };
  writeAtomic(file, `${JSON.stringify(out, null, 2)}\n`);
}

/** A target's name as a file name: `messages (protobuf-es)` -> `messages-protobuf-es`. */
export const slug = (name: string): string => name.replace(/[^a-zA-Z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase();

/** The target a reproducer or kept corpus names. */
export function targetNamed(targets: readonly FuzzTarget[], name: string, where: string): FuzzTarget {
  const t = targets.find((x) => x.name === name);
  if (t === undefined) throw new Error(`fuzz: ${where} names target ${JSON.stringify(name)}, which does not exist (targets: ${targets.map((x) => x.name).join(", ")})`);
  return t;
}
