/**
 * A small seeded PRNG (mulberry32): the same seed gives the same inputs on every machine, and
 * every input has a seed of its own so any one can be replayed alone.
 */
export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** A uniform unsigned 32-bit integer. */
  u32(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.u32() / 0x100000000) * n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.u32() / 0x100000000 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }
}

/** The seed of input `i` of target `name` in a run seeded `seed`. */
export function inputSeed(seed: number, name: string, i: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let k = 0; k < name.length; k++) h = Math.imul(h ^ name.charCodeAt(k), 0x01000193);
  h = Math.imul(h ^ i, 0x01000193);
  h = Math.imul(h ^ (i / 0x100000000), 0x01000193);
  return (h ^ (h >>> 16)) >>> 0;
}
