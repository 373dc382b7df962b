/** `--name value` flags of the bench programs. */
export function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : undefined;
  if (value !== undefined) return value;
  if (fallback === "") throw new Error(`bench: --${name} is required`);
  return fallback;
}
