/** A semantic version as release tables compare them: numbers, and the pre-release part. */
interface Semver {
  readonly nums: readonly [bigint, bigint, bigint];
  readonly pre: readonly string[];
}

const IDENT = /^[0-9A-Za-z-]+$/u;
const NUM = /^(0|[1-9][0-9]*)$/u;

/**
 * Parses `v1.2.3`, `1.2.3`, the short forms `v1` and `v1.2`, with an optional `-pre` (full form
 * only) and `+build` (ignored). A git-described suffix (`-5-gabc123`, optionally `.dirty`-like
 * after it) counts as the release it follows: it is a later commit, not a pre-release.
 * Undefined when `text` is not such a version.
 */
export function parseSemver(text: string): Semver | undefined {
  let rest = text.startsWith("v") ? text.slice(1) : text;
  const plus = rest.indexOf("+");
  if (plus >= 0) {
    if (!rest.slice(plus + 1).split(".").every((p) => IDENT.test(p))) return undefined;
    rest = rest.slice(0, plus);
  }
  const dash = rest.indexOf("-");
  const core = dash >= 0 ? rest.slice(0, dash) : rest;
  let pre = dash >= 0 ? rest.slice(dash + 1).split(".") : [];
  const parts = core.split(".");
  if (parts.length > 3 || !parts.every((p) => NUM.test(p))) return undefined;
  if (dash >= 0 && parts.length < 3) return undefined;
  if (!pre.every((p) => IDENT.test(p) && !(/^[0-9]+$/u.test(p) && p.length > 1 && p.startsWith("0")))) return undefined;
  if (pre.length > 0 && /^[0-9]+-g[0-9a-f]+$/u.test(pre[0]!)) pre = [];
  const n = (i: number): bigint => BigInt(parts[i] ?? "0");
  return { nums: [n(0), n(1), n(2)], pre };
}

function comparePre(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return b.length - a.length; // a release sorts after its pre-releases
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    const xn = /^[0-9]+$/u.test(x);
    const yn = /^[0-9]+$/u.test(y);
    if (xn && yn) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** Orders two parsed versions: negative, zero or positive. */
export function compareSemver(a: Semver, b: Semver): number {
  for (let i = 0; i < 3; i++) if (a.nums[i] !== b.nums[i]) return a.nums[i]! < b.nums[i]! ? -1 : 1;
  return Math.sign(comparePre(a.pre, b.pre));
}

/** The largest of `versions` not above `version`, or undefined if there is none (or `version` does not parse). */
export function closestAtOrBelow(version: string, versions: readonly string[]): string | undefined {
  const v = parseSemver(version);
  if (v === undefined) return undefined;
  let best: { text: string; sv: Semver } | undefined;
  for (const text of versions) {
    const sv = parseSemver(text);
    if (sv === undefined || compareSemver(sv, v) > 0) continue;
    if (best === undefined || compareSemver(sv, best.sv) > 0) best = { text, sv };
  }
  return best?.text;
}
