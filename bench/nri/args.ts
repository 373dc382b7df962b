/** `--name value` flags of the bench programs. */
export function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : undefined;
  if (value !== undefined) return value;
  if (fallback === "") throw new Error(`bench: --${name} is required`);
  return fallback;
}

/** The endpoint option a `--busy-poll MICROS` flag sets, or none (the default window). */
export function busyPollOption(): { busyPollMicros?: number } {
  return process.argv.includes("--busy-poll") ? { busyPollMicros: Number(flag("busy-poll", "")) } : {};
}

/** The endpoint option a `--warm-up` flag sets, or none (the default: no warm-up). */
export function warmUpOption(): { warmUp?: boolean } {
  return process.argv.includes("--warm-up") ? { warmUp: true } : {};
}
