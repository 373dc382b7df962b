import { UsageError } from "./errors.js";
import { parseArgs } from "node:util";

/** Exit codes of the nri-wire command. */
export const EXIT = {
  /** The command did what was asked. */
  ok: 0,
  /** The command ran and failed (a peer misbehaved, a connection failed, a check did not pass). */
  failed: 1,
  /** The command line was wrong: unknown command or option, missing or bad value. */
  usage: 2,
} as const;

/** One option of a command: a string or boolean flag with its help text. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly description: string;
  /** The value's placeholder in help (`PATH`); string options only. */
  readonly value?: string;
  readonly short?: string;
  /** Shown without brackets in the usage line; the command checks it. */
  readonly required?: boolean;
  /**
   * The value is itself a list of flags (`--node-options "--max-semi-space-size=1"`): the argument
   * after the option is its value even when it starts with a dash. String options only.
   */
  readonly flagsValue?: boolean;
}

/** A subcommand of `nri-wire`: its help and what it runs. Adding one is one entry in commands.ts. */
export interface Command {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Paragraphs after the usage line in `nri-wire <name> --help`. */
  readonly description?: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Names of the positional arguments, for the usage line; none allowed when absent. */
  readonly positionals?: string;
  /** Runs the command; resolves with its exit code. Throw UsageError for a bad command line. */
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number>;
}

/** The usage line of a command. */
export function usageLine(c: Command): string {
  const opts = Object.entries(c.options).map(([n, o]) => {
    const flag = o.type === "boolean" ? `--${n}` : `--${n} ${o.value ?? "VALUE"}`;
    return o.required === true ? flag : `[${flag}]`;
  });
  return ["nri-wire", c.name, ...opts, ...(c.positionals === undefined ? [] : [c.positionals])].join(" ");
}

/** `nri-wire <name> --help`. */
export function commandHelp(c: Command): string {
  const width = Math.max(...Object.entries(c.options).map(([n, o]) => n.length + (o.value === undefined ? 0 : o.value.length + 1)), 4) + 4;
  const lines = [`usage: ${usageLine(c)}`, "", c.summary];
  if (c.description !== undefined) lines.push("", c.description);
  lines.push("", "options:");
  for (const [n, o] of Object.entries(c.options)) {
    const flag = `--${n}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`;
    lines.push(`  ${flag.padEnd(width)}${o.description}`);
  }
  lines.push(`  ${"--help".padEnd(width)}this help`);
  return lines.join("\n");
}

/** Parses a command's arguments against its options; a bad one is a UsageError. */
export function parseCommandArgs(c: Command, args: string[]): { values: Record<string, string | boolean | undefined>; positionals: string[]; help: boolean } {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = { help: { type: "boolean", short: "h" } };
  for (const [n, o] of Object.entries(c.options)) options[n] = o.short === undefined ? { type: o.type } : { type: o.type, short: o.short };
  // parseArgs takes a value starting with a dash only in the `--name=value` form: give it that.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const spec = a.startsWith("--") ? c.options[a.slice(2)] : undefined;
    if (spec?.flagsValue === true && spec.type === "string" && i + 1 < args.length) joined.push(`${a}=${args[++i]!}`);
    else joined.push(a);
    if (a === "--") {
      joined.push(...args.slice(i + 1));
      break;
    }
  }
  try {
    const { values, positionals } = parseArgs({ args: joined, options, strict: true, allowPositionals: c.positionals !== undefined });
    const help = values.help === true;
    delete values.help;
    return { values: values as Record<string, string | boolean | undefined>, positionals, help };
  } catch (e) {
    throw new UsageError(`nri-wire ${c.name}: ${(e as Error).message}`);
  }
}
