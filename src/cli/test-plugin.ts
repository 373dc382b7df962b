import { readFile, writeFile } from "node:fs/promises";
import { runConformance } from "../testing/conformance.js";
import { formatJson, formatJunit, formatTable } from "../testing/conformance-report.js";
import { launchStarter, socketStarter } from "../testing/plugin-starter.js";
import { SCENARIO_FORMAT, parseScenario } from "../testing/scenario.js";
import { EXPECTATIONS_FORMAT, parseExpectations } from "../testing/expectations.js";
import { DIALECTS, type Dialect } from "../api/revision.js";
import { type Command, EXIT } from "./command.js";
import { UsageError } from "./errors.js";

function ms(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`nri-wire test-plugin: --${name} ${raw} is not a positive number of ms`);
  return n;
}

/** What `parse` makes of the JSON in `file`, or a usage error naming the option, the file and what is wrong with it. */
async function jsonFile<T>(option: string, file: string, parse: (json: unknown) => T): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new UsageError(`nri-wire test-plugin: --${option} ${file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
  }
  try {
    return parse(JSON.parse(text));
  } catch (e) {
    const why = e instanceof SyntaxError ? `not JSON: ${e.message}` : (e as Error).message;
    throw new UsageError(`nri-wire test-plugin: --${option} ${file}: ${why}`);
  }
}

/**
 * The conformance runner. Starts the plugin command as a runtime starts a
 * pre-installed plugin (fd 3, NRI_PLUGIN_NAME/IDX/SOCKET), or with `--socket PATH` listens there
 * for a plugin started by the command (pointed at PATH) or by other means. Prints a table per
 * dialect, or `--json`; `--junit FILE` writes JUnit XML too. Exit status 1 on any failure.
 */
export async function runTestPlugin(
  values: Record<string, string | boolean | undefined>,
  command: string[],
  print: (text: string) => void = (t) => process.stdout.write(t),
): Promise<number> {
  const str = (k: string): string | undefined => values[k] as string | undefined;
  if (values.socket === undefined && command.length === 0) throw new UsageError("nri-wire test-plugin: give the plugin command after --, or --socket");
  const dialects = (str("dialect") ?? DIALECTS.join(",")).split(",").map((f) => {
    if (!(DIALECTS as readonly string[]).includes(f)) throw new UsageError(`nri-wire test-plugin: unknown dialect "${f}": use ${DIALECTS.join(", ")}`);
    return f as Dialect;
  });
  const name = str("name");
  const idx = str("idx");
  const socket = str("socket");
  const expected = { ...(name === undefined ? {} : { name }), ...(idx === undefined ? {} : { idx }) };
  const starter = socket !== undefined ? socketStarter(socket, command.length === 0 ? undefined : command, expected) : launchStarter(command, name ?? "test-plugin", idx ?? "50");
  const requestTimeoutMs = ms("request-timeout", str("request-timeout"));
  const registrationTimeoutMs = ms("registration-timeout", str("registration-timeout"));
  const goneTimeoutMs = ms("gone-timeout", str("gone-timeout"));
  const aliveWindowMs = ms("alive-window", str("alive-window"));
  const scenarioFile = str("scenario");
  const scenario = scenarioFile === undefined ? undefined : await jsonFile("scenario", scenarioFile, parseScenario);
  const expectFile = str("expect");
  const expectations = expectFile === undefined ? undefined : await jsonFile("expect", expectFile, parseExpectations);
  const config = str("config");
  const junit = str("junit");
  const report = await runConformance({
    starter,
    dialects,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    ...(registrationTimeoutMs === undefined ? {} : { registrationTimeoutMs }),
    ...(goneTimeoutMs === undefined ? {} : { goneTimeoutMs }),
    ...(aliveWindowMs === undefined ? {} : { aliveWindowMs }),
    ...(scenario === undefined ? {} : { scenario }),
    ...(expectations === undefined ? {} : { expectations }),
    ...(config === undefined ? {} : { config }),
  });
  print(values.json === true ? formatJson(report) : formatTable(report));
  if (junit !== undefined) await writeFile(junit, formatJunit(report));
  return report.passed ? EXIT.ok : EXIT.failed;
}

/** `nri-wire test-plugin`. */
export const testPluginCommand: Command = {
  name: "test-plugin",
  summary: "Run the NRI conformance suite on a plugin, playing a v1beta1, a dedicated-era and a StateChange-era runtime.",
  description: `Starts the plugin command as a runtime starts a pre-installed plugin (its connection on fd 3,\nNRI_PLUGIN_NAME, NRI_PLUGIN_IDX, NRI_PLUGIN_SOCKET=3), or with --socket listens there for the command\n(pointed at PATH) or a plugin started by other means. Prints a table per dialect, with the end of the\nplugin's stderr when a check failed, and every answer (with its expectation, given --expect);\nexit code 1 on any failure. With --socket and a command, the plugin is judged as an external one:\nafter the runtime restarts it reconnects (or exits, and is started again).\n\n${SCENARIO_FORMAT}\n\n${EXPECTATIONS_FORMAT}`,
  options: {
    name: { type: "string", value: "N", description: "plugin name to launch with (default test-plugin); with --socket, the name expected" },
    idx: { type: "string", value: "NN", description: "plugin index to launch with (default 50); with --socket, the index expected" },
    socket: { type: "string", value: "PATH", description: "listen on PATH for the plugin instead of launching it on fd 3" },
    dialect: { type: "string", value: "LIST", description: "dialects to play, comma-separated: v1beta1,v1alpha1,statechange (default all)" },
    json: { type: "boolean", description: "print the report as JSON" },
    junit: { type: "string", value: "FILE", description: "also write the report as JUnit XML" },
    config: { type: "string", value: "TEXT", description: "the configuration sent in Configure (default empty)" },
    "request-timeout": { type: "string", value: "MS", description: "request timeout (default 2000)" },
    "registration-timeout": { type: "string", value: "MS", description: "registration timeout (default 5000)" },
    "gone-timeout": { type: "string", value: "MS", description: "how long a launched plugin may outlive its connection (default 2000)" },
    "alive-window": { type: "string", value: "MS", description: "how long the plugin must stay up after its last answer before a restart or Shutdown (default 200)" },
    scenario: { type: "string", value: "FILE", description: "the pods, containers, annotations and other plugins of the script, as JSON (format below)" },
    expect: { type: "string", value: "FILE", description: "what each event is expected to be answered with, as JSON (format below)" },
  },
  positionals: "-- <plugin command...>",
  run: (v, positionals) => runTestPlugin(v, positionals),
};
