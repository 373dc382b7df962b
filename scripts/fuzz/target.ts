import type { Rng } from "./rng.js";

/** An input that broke a rule: an undocumented exception, a wrong result, a leak. */
export class Finding extends Error {
  override name = "Finding";
}

/** A value an input is made of; bytes are stored as base64 in corpus and reproducer files. */
export type InputValue = number | string | boolean | Uint8Array | readonly Uint8Array[];

/** One input of a target, as plain data: it can be saved, replayed and minimized without the RNG. */
export type Input = { readonly [key: string]: InputValue };

/** What a check sees besides its input (its functions may be passed on alone). */
export interface Probe {
  /** Times the decoding part of the input (generation and checks are not counted). */
  time<T>(f: () => T): T;
  /** Counts an event worth reporting (`protobuf-es reads other fields`); it also marks the outcome. */
  tally(key: string): void;
}

/** What one input ended in: a correct result, or the documented error (its message). */
export type Outcome = "ok" | { readonly error: string };

/** One decoder an untrusted peer reaches, driven one input at a time. */
export interface FuzzTarget {
  readonly name: string;
  /** The only errors an input may end in. */
  readonly errorClass: string;
  /** The decoder's state after such an error. */
  readonly afterError: string;
  /** Draws an input from `rng`: from the seed corpus, or now and then one of `kept` mutated. */
  draw(rng: Rng, kept: readonly Input[]): Input;
  /** Runs one input, on the input alone (a replay's target has another corpus); throws Finding when a rule is broken. */
  check(input: Input, probe: Probe): Outcome;
}

/** A target over inputs of type `I`; `defineTarget` makes it a FuzzTarget. */
export interface TargetSpec<I extends Input> {
  readonly name: string;
  readonly errorClass: string;
  readonly afterError: string;
  draw(rng: Rng, kept: readonly I[]): I;
  check(input: I, probe: Probe): Outcome;
}

/**
 * A target whose inputs are checked for their shape where they come from outside (a kept corpus
 * or a reproducer file): `shape` lists each field's kind.
 */
export function defineTarget<I extends Input>(spec: TargetSpec<I>, shape: { readonly [K in keyof I]: Kind }): FuzzTarget {
  const valid = (input: Input): input is I => Object.entries(shape).every(([k, kind]) => kindOf(input[k]) === kind);
  const own = (input: Input): I => {
    if (!valid(input)) throw new Error(`fuzz: input is not one of ${spec.name}: ${JSON.stringify(Object.fromEntries(Object.entries(input).map(([k, v]) => [k, kindOf(v)])))}`);
    return input;
  };
  return {
    name: spec.name,
    errorClass: spec.errorClass,
    afterError: spec.afterError,
    draw: (rng, kept) => spec.draw(rng, kept as readonly I[]),
    check: (input, probe) => spec.check(own(input), probe),
  };
}

/** The kinds of InputValue. */
export type Kind = "number" | "string" | "boolean" | "bytes" | "chunks";

function kindOf(v: InputValue | undefined): Kind | undefined {
  if (v instanceof Uint8Array) return "bytes";
  if (Array.isArray(v)) return v.every((x) => x instanceof Uint8Array) ? "chunks" : undefined;
  const t = typeof v;
  return t === "number" || t === "string" || t === "boolean" ? t : undefined;
}

/** Bytes in an input, to keep the smallest example of an outcome. */
export function inputSize(input: Input): number {
  let n = 0;
  for (const v of Object.values(input)) {
    if (v instanceof Uint8Array) n += v.length;
    else if (Array.isArray(v)) for (const c of v as readonly Uint8Array[]) n += c.length;
    else n += 8;
  }
  return n;
}

/**
 * Runs `feed` on each chunk in turn under one timing (a clock read per chunk would cost more than
 * decoding a byte of it); returns what `feed` threw, stopping there, or undefined.
 */
export function feedChunks(probe: Probe, chunks: readonly Uint8Array[], feed: (chunk: Uint8Array) => void): unknown {
  return probe.time(() => {
    for (const c of chunks) {
      try {
        feed(c);
      } catch (e) {
        return e ?? new Error(String(e));
      }
    }
    return undefined;
  });
}

/** `e` as `Class: message`, for findings. */
export function describe(e: unknown): string {
  return e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e);
}

/** Throws Finding unless `e` is what `ok` accepts. */
export function expectError(e: unknown, ok: (e: unknown) => boolean, what: string): void {
  if (!ok(e)) throw new Finding(`${what} threw ${describe(e)}`, { cause: e });
}

export const EMPTY = new Uint8Array(0);

/** Whether two byte strings are equal. */
export const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/**
 * The parts as one new plain Uint8Array. Never a Buffer in the harness: Buffer's slice() is a
 * view, and a small Buffer lies in Node's shared pool, so writing to a "copy" or through
 * `new DataView(b.buffer)` would change other inputs.
 */
export function concatAll(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A copy of `b` as a plain Uint8Array of its own (offset 0), safe to write to. */
export const copyOf = (b: Uint8Array): Uint8Array => Uint8Array.prototype.slice.call(b);

/** Big-endian u32 at `at`. */
export const u32 = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

/** The first 64 bytes in hex, for messages. */
export const hexOf = (b: Uint8Array): string => Buffer.from(b.subarray(0, 64)).toString("hex") + (b.length > 64 ? "…" : "");
