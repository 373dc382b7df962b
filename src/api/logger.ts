/** What a log line may carry besides its message: who and what it is about. */
export interface LogFields {
  /** The plugin, `NN-name`. */
  readonly plugin?: string;
  /** The event or call, by its method name (`CreateContainer`). */
  readonly event?: string;
  /** The pod sandbox's id. */
  readonly pod?: string;
  /** The container's id. */
  readonly container?: string;
}

/**
 * Where an endpoint, plugin or runtime, reports what it does not throw. Each method may take the
 * line's fields; a logger that takes only the message (pino's methods, `console`) works as it is.
 */
export interface Logger {
  /** Progress worth a line: registered, configured, synchronized, closed. */
  info(message: string, fields?: LogFields): void;
  /** Something skipped or dropped that the endpoint goes on without. */
  warn(message: string, fields?: LogFields): void;
  /** A failure: a plugin refused or dropped, a handler or an event failed. */
  error(message: string, fields?: LogFields): void;
}

function toStderr(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** The default of both endpoints: warnings and errors to stderr, info nowhere. */
export const stderrLogger: Logger = { info: () => undefined, warn: toStderr, error: toStderr };

/**
 * A complete logger from a partial one: what it leaves out goes where the default sends it. The
 * methods given are called on their object (pino's and other class-based loggers need `this`).
 */
export function resolveLogger(log: Partial<Logger> | undefined): Logger {
  if (log === undefined) return stderrLogger;
  return { info: log.info?.bind(log) ?? stderrLogger.info, warn: log.warn?.bind(log) ?? stderrLogger.warn, error: log.error?.bind(log) ?? stderrLogger.error };
}

/** The fields of a call about the pod and container of `request`, when it has them. */
export function requestFields(plugin: string, event: string, request: unknown): LogFields {
  const r = request as { pod?: { id?: string }; container?: { id?: string; podSandboxId?: string } } | undefined;
  const pod = r?.pod?.id || r?.container?.podSandboxId || undefined;
  const container = r?.container?.id || undefined;
  return { plugin, event, ...(pod === undefined ? {} : { pod }), ...(container === undefined ? {} : { container }) };
}
