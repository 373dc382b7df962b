import { protoSites, splice, varint } from "./mutate.js";
import { checkOnce } from "./run.js";
import { type FuzzTarget, type Input, type InputValue, concatAll, inputSize } from "./target.js";

/** A finding's message without the input's bytes and numbers, so a smaller input failing the same way counts. */
const shape = (message: string): string => message.replace(/\(input [^)]*\)/g, "").replace(/\d+/g, "N");

const EMPTY = new Uint8Array(0);

/**
 * Shrinks `b` while `fails` holds: whole protobuf fields dropped (nested ones too, their enclosing
 * lengths rewritten), then runs of bytes removed (halving the run length down to one byte), inside
 * each length-delimited value and over the whole.
 */
function shrinkBytes(b: Uint8Array, fails: (b: Uint8Array) => boolean, depth = 0): Uint8Array {
  let cur = b;
  // Top-level fields only (protoSites goes no deeper from depth 3); nested ones by recursion.
  const sites = (): ReturnType<typeof protoSites> => protoSites(cur, 0, cur.length, 3);
  for (let i = 0; i < sites().length; ) {
    const s = sites()[i]!;
    const candidate = splice(cur, s.tagStart, s.valueEnd, EMPTY);
    if (fails(candidate)) cur = candidate;
    else i++;
  }
  if (depth < 8) {
    for (let i = 0; i < sites().length; i++) {
      const s = sites()[i]!;
      if (s.wire !== 2) continue;
      const head = cur.subarray(0, s.tagEnd);
      const tail = cur.subarray(s.valueEnd);
      const wrap = (v: Uint8Array): Uint8Array => concatAll([head, varint(v.length), v, tail]);
      const value = shrinkBytes(cur.subarray(s.valueStart, s.valueEnd), (v) => fails(wrap(v)), depth + 1);
      if (value.length < s.valueEnd - s.valueStart) cur = wrap(value);
    }
  }
  for (let run = cur.length >> 1 || 1; run >= 1; run >>= 1) {
    for (let at = 0; at < cur.length; ) {
      const candidate = splice(cur, at, Math.min(cur.length, at + run), EMPTY);
      if (fails(candidate)) cur = candidate;
      else at += run;
    }
  }
  return cur;
}

/**
 * The smallest input found that still fails the way `input` does: bytes shrunk as above, chunks
 * dropped and joined, repeated until nothing helps.
 */
export function minimize(target: FuzzTarget, input: Input, message: string): { input: Input; tries: number } {
  const want = shape(message);
  let tries = 0;
  const fails = (candidate: Input): boolean => {
    tries++;
    const f = checkOnce(target, candidate);
    return f !== undefined && shape(f.message) === want;
  };
  let best = input;
  const withValue = (k: string, v: InputValue): Input => ({ ...best, [k]: v });
  for (let size = Infinity; ; ) {
    for (const [k, v] of Object.entries(best)) {
      if (v instanceof Uint8Array) {
        best = withValue(k, shrinkBytes(v, (b) => fails(withValue(k, b))));
      } else if (Array.isArray(v)) {
        const chunks = (): readonly Uint8Array[] => best[k] as readonly Uint8Array[];
        for (let i = 0; i < chunks().length; ) {
          const c = chunks();
          const dropped = withValue(k, [...c.slice(0, i), ...c.slice(i + 1)]);
          const joined = i + 1 < c.length ? withValue(k, [...c.slice(0, i), concatAll([c[i]!, c[i + 1]!]), ...c.slice(i + 2)]) : undefined;
          if (fails(dropped)) best = dropped;
          else if (joined !== undefined && fails(joined)) best = joined;
          else i++;
        }
        for (let i = 0; i < chunks().length; i++) {
          const others = chunks();
          best = withValue(k, others.map((x, j) => (j === i ? shrinkBytes(x, (b) => fails(withValue(k, others.map((y, m) => (m === i ? b : y))))) : x)));
        }
      }
    }
    if (inputSize(best) >= size) break;
    size = inputSize(best);
  }
  return { input: best, tries };
}
