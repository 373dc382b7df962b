/** Where an endpoint, plugin or runtime, reports what it does not throw. */
export interface Logger {
  /** Progress worth a line: registered, configured, synchronized, closed. */
  info(message: string): void;
  /** Something skipped or dropped that the endpoint goes on without. */
  warn(message: string): void;
  /** A failure: a plugin refused or dropped, a handler or an event failed. */
  error(message: string): void;
}

function toStderr(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** The default of both endpoints: warnings and errors to stderr, info nowhere. */
export const stderrLogger: Logger = { info: () => undefined, warn: toStderr, error: toStderr };

/** A complete logger from a partial one: what it leaves out goes where the default sends it. */
export function resolveLogger(log: Partial<Logger> | undefined): Logger {
  if (log === undefined) return stderrLogger;
  return { info: log.info ?? stderrLogger.info, warn: log.warn ?? stderrLogger.warn, error: log.error ?? stderrLogger.error };
}
