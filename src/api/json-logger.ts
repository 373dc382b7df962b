import type { LogFields, Logger } from "./logger.js";
import { oneOf } from "../internal/one-of.js";

/** A JSON logger's level: the lines it writes are of this level and above. */
export type LogLevel = "info" | "warn" | "error";
/** The levels of a JSON logger, lowest first. */
export const LOG_LEVELS: readonly LogLevel[] = ["info", "warn", "error"];

/** Options of jsonLogger. */
export interface JsonLoggerOptions {
  /** The lowest level written; default `info`. */
  level?: LogLevel;
  /** Where lines go; default process.stderr. */
  stream?: {
    /** Takes one line, newline included. */
    write(line: string): unknown;
  };
  /** Fields every line carries (say, the plugin of a process that runs one). */
  fields?: LogFields;
  /** The clock; default Date.now. */
  now?: () => number;
}

/**
 * A Logger that writes one JSON object per line: `level`, `time` (ISO 8601), `msg`, then the
 * line's fields (`plugin`, `event`, `pod`, `container`). Pass it as `log` to NriPlugin or
 * NriRuntime.
 */
export function jsonLogger(o: JsonLoggerOptions = {}): Logger {
  const level = o.level === undefined ? "info" : oneOf("nri: log level", o.level, LOG_LEVELS);
  const stream = o.stream ?? process.stderr;
  const now = o.now ?? Date.now;
  const fixed = o.fields ?? {};
  const min = LOG_LEVELS.indexOf(level);
  const at = (l: LogLevel) => {
    if (LOG_LEVELS.indexOf(l) < min) return () => undefined;
    return (message: string, fields?: LogFields): void => {
      stream.write(`${JSON.stringify({ level: l, time: new Date(now()).toISOString(), msg: message, ...fixed, ...fields })}\n`);
    };
  };
  return { info: at("info"), warn: at("warn"), error: at("error") };
}
