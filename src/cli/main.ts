#!/usr/bin/env node
/**
 * The nri-wire command line: `example-plugin` and `example-runtime`, the NRI peers whose
 * command line matches the Go interop peers (see test/interop/PEERS.md).
 */
import { parseArgs } from "node:util";
import type { PluginDialect } from "../nri/plugin.js";
import { runExamplePlugin } from "./example-plugin.js";
import { runExampleRuntime } from "./example-runtime.js";
import { DECODE_USAGE, runDecode } from "./decode.js";
import { RECORD_USAGE, runRecord } from "./record.js";
import { TEST_PLUGIN_USAGE, runTestPlugin } from "./test-plugin.js";

/** Commands that parse their own arguments. */
const TOOLS: Readonly<Record<string, (args: string[]) => number | Promise<number>>> = {
  decode: runDecode,
  record: runRecord,
  "test-plugin": runTestPlugin,
};

const USAGE = `usage:
  nri-wire example-plugin [--socket PATH] [--name NAME] [--idx NN] [--dialect v1beta1|v1alpha1|statechange]
  nri-wire example-runtime --socket PATH [--plugins N]
  ${DECODE_USAGE}
  ${RECORD_USAGE}
  ${TEST_PLUGIN_USAGE}`;

const DIALECTS: readonly string[] = ["v1beta1", "v1alpha1", "statechange"];

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const tool = command === undefined ? undefined : TOOLS[command];
  if (tool !== undefined) return tool(rest);
  const { values } = parseArgs({
    args: rest,
    options: {
      socket: { type: "string" },
      name: { type: "string" },
      idx: { type: "string" },
      dialect: { type: "string" },
      plugins: { type: "string" },
    },
    strict: true,
  });
  switch (command) {
    case "example-plugin": {
      // Without --socket the plugin uses the fd a launching runtime handed it, or the default path.
      const dialect = values.dialect ?? "v1beta1";
      if (!DIALECTS.includes(dialect)) throw new Error(`nri-wire: unknown dialect "${dialect}": use v1beta1, v1alpha1 or statechange`);
      const reason = await runExamplePlugin({
        ...(values.socket === undefined ? {} : { socketPath: values.socket }),
        // Identity: flags, then what a launching runtime set, then the peers' defaults.
        name: values.name ?? process.env.NRI_PLUGIN_NAME ?? "peer-plugin",
        idx: values.idx ?? process.env.NRI_PLUGIN_IDX ?? "10",
        dialect: dialect as PluginDialect,
      });
      process.stderr.write(`${reason.message}\n`);
      return 0;
    }
    case "example-runtime": {
      if (values.socket === undefined) throw new Error(`nri-wire: --socket is required\n${USAGE}`);
      const plugins = Number(values.plugins ?? "1");
      if (!Number.isSafeInteger(plugins) || plugins < 1) throw new Error(`nri-wire: --plugins ${values.plugins} is not a positive integer`);
      return runExampleRuntime({ socketPath: values.socket, plugins });
    }
    default:
      throw new Error(`nri-wire: unknown command "${command ?? ""}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 1;
  },
);
