/**
 * `value` when it is one of `allowed`, else a RangeError naming the option and what it takes:
 * `nri: dialect "state-change" is not "v1beta1", "v1alpha1" or "statechange"`. String options
 * are checked where they enter, so a misspelt value never quietly takes another path.
 */
export function oneOf<T extends string>(what: string, value: unknown, allowed: readonly T[]): T {
  if ((allowed as readonly unknown[]).includes(value)) return value as T;
  const quoted = allowed.map((a) => JSON.stringify(a));
  const choices = quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)!}`;
  const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
  throw new RangeError(`${what} ${shown} is not ${choices}`);
}
