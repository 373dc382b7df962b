/** The message of an Error, or the text of anything else thrown. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
