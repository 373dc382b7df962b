/**
 * What every example shares: the command line (`--socket PATH --name NAME --idx NN`, all
 * optional: a runtime that launches the plugin passes the socket and identity in the
 * environment) and running until the runtime goes away.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { NriPlugin, type PluginHandlers, type PluginOptions } from "nri-wire/plugin";

/** Whether `meta` is the module node was asked to run (rather than one imported). */
export function isMain(meta: ImportMeta): boolean {
  return process.argv[1] !== undefined && meta.url === pathToFileURL(process.argv[1]).href;
}

/** The flags every example takes, plus the example's own string flags. */
export function flags(own: readonly string[] = []): Record<string, string | undefined> {
  const options: Record<string, { type: "string" }> = { socket: { type: "string" }, name: { type: "string" }, idx: { type: "string" } };
  for (const o of own) options[o] = { type: "string" };
  return parseArgs({ options, strict: true }).values as Record<string, string | undefined>;
}

/** Plugin options from the common flags, falling back to the example's default identity. */
export function pluginOptions(f: Record<string, string | undefined>, name: string, idx: string): PluginOptions {
  return {
    ...(f.socket === undefined ? {} : { socketPath: f.socket }),
    name: f.name ?? process.env.NRI_PLUGIN_NAME ?? name,
    idx: f.idx ?? process.env.NRI_PLUGIN_IDX ?? idx,
  };
}

/** Starts one plugin and waits until the runtime closes the connection; exit code 0 then. */
export async function run(plugin: NriPlugin): Promise<void> {
  await plugin.start();
  const reason = await plugin.closed;
  process.stderr.write(`${plugin.id}: ${reason.message}\n`);
}

/** Runs `main`, turning a failure into a message and exit code 1. */
export function main(fn: () => Promise<void>): void {
  fn().catch((e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 1;
  });
}

export type { PluginHandlers };
