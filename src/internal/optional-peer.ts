/**
 * Optional peer dependencies (prom-client, @opentelemetry/api) are loaded only when an option
 * asks for what they do. Each caller imports its module with a literal specifier inside a try
 * block, so that a bundler takes the module in when it is installed and leaves the import alone
 * when it is not.
 */

/** Whether `e` says that `name` itself (not a module it imports) could not be found. */
export function isMissing(e: unknown, name: string): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const text = String((e as Error | null)?.message);
  // A single executable application loads built-in modules only: a peer its bundle left out is one.
  if (code === "ERR_UNKNOWN_BUILTIN_MODULE") return text.endsWith(`: ${name}`);
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return text.includes(`'${name}'`) || text.includes(`"${name}"`);
}

/** The one line that says a feature (plural: `prometheus metrics`) needs an optional peer that is not installed. */
export function missingPeerError(name: string, feature: string, cause: unknown): Error {
  return new Error(`${feature} need ${name}, an optional peer dependency of nri-wire that is not installed: npm install ${name}`, { cause });
}

/**
 * An option that turns a feature on: false or undefined (off), true (the defaults) or an object
 * of options; anything else is refused where it enters.
 */
export function featureOption<O extends object>(what: string, value: boolean | O | undefined): O | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {} as O;
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new TypeError(`${what} is ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}, not a boolean or an object of options`);
  return value;
}
