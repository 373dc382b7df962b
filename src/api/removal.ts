/**
 * The removal marker of the protocol: a key, path, destination or namespace type prefixed with
 * `-` in an adjustment asks the runtime to remove that entry (and lets the plugin touch it
 * afterwards without conflicting with another plugin that set it); an owner record `-P` says
 * plugin P removed the field.
 */
export function markForRemoval(key: string): string {
  return `-${key}`;
}

/** The key a removal marker names, or undefined if `key` is not marked (`""` never is). */
export function markedForRemoval(key: string): string | undefined {
  return key.length > 0 && key.charCodeAt(0) === 0x2d ? key.slice(1) : undefined;
}
