/**
 * The removal marker of the protocol: a key, path or type prefixed with `-` in an adjustment
 * asks the runtime to remove that entry (and lets the plugin touch it afterwards without
 * conflicting with another plugin that set it).
 */
export function markForRemoval(key: string): string {
  return `-${key}`;
}

/** The key a removal marker names, or undefined if `key` is not marked. */
export function markedForRemoval(key: string): string | undefined {
  return key.startsWith("-") ? key.slice(1) : undefined;
}
