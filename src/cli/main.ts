#!/usr/bin/env node
/**
 * The nri-wire command line. Every subcommand is one entry of COMMANDS (commands.ts); this file
 * only dispatches, prints help and versions, and maps failures to the exit codes of EXIT.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Command, EXIT, commandHelp, parseCommandArgs } from "./command.js";
import { UsageError } from "./errors.js";
import { COMMANDS } from "./commands.js";
import { nriWireVersion } from "../internal/nri-wire-version.js";
import { checkEngine } from "../internal/engine.js";

function help(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    "usage: nri-wire <command> [options]",
    "       nri-wire <command> --help | --help | --version",
    "",
    "The containerd NRI wire protocol: example peers and tools.",
    "",
    "commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    "exit codes:",
    `  ${EXIT.ok}  success`,
    `  ${EXIT.failed}  the command ran and failed`,
    `  ${EXIT.usage}  usage error: unknown command or option, missing or bad value`,
  ].join("\n");
}

/** Runs the command line `argv` (without node and the script); resolves with the exit code. */
export async function main(
  argv: readonly string[],
  commands: readonly Command[] = COMMANDS,
  out: (line: string) => void = (s) => process.stdout.write(`${s}\n`),
  err: (line: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? commands.find((c) => c.name === rest[0]) : undefined;
    if (first === undefined) {
      err(help(commands));
      return EXIT.usage;
    }
    out(topic === undefined ? help(commands) : commandHelp(topic));
    return EXIT.ok;
  }
  if (first === "--version" || first === "-V") {
    out(`nri-wire ${nriWireVersion()}`);
    return EXIT.ok;
  }
  const command = commands.find((c) => c.name === first);
  if (command === undefined) {
    err(`nri-wire: unknown command "${first}"; commands: ${commands.map((c) => c.name).join(", ")} (nri-wire --help)`);
    return EXIT.usage;
  }
  try {
    const { values, positionals, help: wantsHelp } = parseCommandArgs(command, rest);
    if (wantsHelp) {
      out(commandHelp(command));
      return EXIT.ok;
    }
    checkEngine();
    return await command.run(values, positionals);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`${e.message}\n${commandHelp(command).split("\n")[0]!}`);
      return EXIT.usage;
    }
    err((e as Error).message);
    return EXIT.failed;
  }
}

// Run when this file is the program (also through the npm bin symlink), not when imported.
if (process.argv[1] !== undefined && realpathSync(fileURLToPath(import.meta.url)) === realpathSync(process.argv[1])) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
