import { type Input, type Outcome, inputSize } from "./target.js";

/**
 * An outcome as a short key: the error's message, or "ok" with what was tallied, with numbers as
 * N and NRI type names as T, so that inputs differing only in an offset, a length or the message
 * type share one (the field names stay: which field's decoder ended the input).
 */
export function outcomeKey(outcome: Outcome, tallied: readonly string[]): string {
  const text = outcome === "ok" ? (tallied.length === 0 ? "ok" : `ok; ${[...new Set(tallied)].join("; ")}`) : outcome.error;
  return text.replace(/\bnri\.pkg\.api\.[\w.]+/g, "T").replace(/\d+/g, "N").slice(0, 200);
}

/** A kept input and the outcome it is the smallest example of. */
export interface KeptInput {
  readonly outcome: string;
  readonly input: Input;
}

/**
 * The outcomes a target's inputs have ended in, counted, and for each the smallest input seen
 * (up to `maxKept` of them, each at most `maxBytes`): the kept inputs are mutated again, so a rare
 * path once reached is explored further, and replayed as a regression corpus.
 */
export class OutcomePool {
  /** Inputs per outcome key, in order of first sight. */
  readonly counts = new Map<string, number>();
  private readonly kept: KeptInput[] = [];
  private readonly sizes: number[] = [];
  private readonly at = new Map<string, number>();
  /** The kept inputs, for draws (the same array, updated in place). */
  readonly inputs: Input[] = [];

  constructor(
    readonly maxKept = 150,
    readonly maxBytes = 2048,
    /** Beyond this many distinct outcomes, new ones are counted under "(other)". */
    readonly maxOutcomes = 1000,
  ) {}

  /** Counts an input's outcome, and keeps the input if it is the first or smallest example. */
  note(key: string, input: Input): void {
    let k = key;
    const seen = this.counts.get(k);
    if (seen === undefined && this.counts.size >= this.maxOutcomes) k = "(other)";
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    const i = this.at.get(k);
    if (i === undefined && this.kept.length >= this.maxKept) return;
    const size = inputSize(input);
    if (size > this.maxBytes) return;
    if (i === undefined) {
      this.at.set(k, this.kept.length);
      this.kept.push({ outcome: k, input });
      this.sizes.push(size);
      this.inputs.push(input);
    } else if (size < this.sizes[i]!) {
      this.kept[i] = { outcome: k, input };
      this.sizes[i] = size;
      this.inputs[i] = input;
    }
  }

  /** Restores counts and kept inputs saved before. */
  restore(counts: Readonly<Record<string, number>>, kept: readonly KeptInput[]): void {
    for (const [k, n] of Object.entries(counts)) this.counts.set(k, n);
    for (const e of kept) {
      this.at.set(e.outcome, this.kept.length);
      this.kept.push(e);
      this.sizes.push(inputSize(e.input));
      this.inputs.push(e.input);
    }
  }

  /** The kept inputs with their outcomes. */
  get entries(): readonly KeptInput[] {
    return this.kept;
  }
}
