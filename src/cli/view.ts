import { writeFileSync } from "node:fs";
import { sessionView } from "../testing/session-view.js";
import { type Command, EXIT } from "./command.js";
import { UsageError } from "./errors.js";

/**
 * Writes the session view of the captures (one per plugin connection) to `out`, default the
 * first capture's name with `.html`; returns the path written.
 */
export function writeView(paths: readonly string[], out?: string): string {
  const file = out ?? `${paths[0]!.replace(/\.index\.json$/u, "")}.html`;
  writeFileSync(file, sessionView(paths));
  return file;
}

/** `nri-wire view`. */
export const viewCommand: Command = {
  name: "view",
  summary: "Write a recorded NRI session (captures' .index.json) as one self-contained HTML page to look at.",
  description:
    "One page for every capture given (record writes one per plugin connection; a TestRuntime with\nits record option writes the same): who spoke which revision, a timeline of every call per plugin\nwith its latency, each container's final adjustment with the plugin owning each field, and every\nrefusal and error. The page has no script and loads nothing: it opens offline, in any browser.",
  options: { out: { type: "string", value: "FILE", description: "where to write the page (default: the first capture's name with .html)" } },
  positionals: "CAPTURE.index.json...",
  async run(v, positionals) {
    if (positionals.length === 0) throw new UsageError("nri-wire view: give at least one capture index file");
    const file = writeView(positionals, v.out as string | undefined);
    process.stderr.write(`view: wrote ${file}\n`);
    return EXIT.ok;
  },
};
