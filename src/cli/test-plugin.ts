import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { runConformance } from "../testing/conformance.js";
import { formatJson, formatJunit, formatTable } from "../testing/conformance-report.js";
import { launchStarter, socketStarter } from "../testing/plugin-starter.js";
import { FLAVOURS, type Flavour } from "../testing/scripted-connection.js";

/** Usage of `nri-wire test-plugin`. */
export const TEST_PLUGIN_USAGE =
  "nri-wire test-plugin [--name N] [--idx NN] [--socket PATH] [--flavour v1beta1,v1alpha1,statechange] [--json] [--junit FILE] [--config TEXT] [--request-timeout MS] [--registration-timeout MS] -- <plugin command...>";

function ms(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`nri-wire: --${name} ${raw} is not a positive number of ms`);
  return n;
}

/**
 * `nri-wire test-plugin`: the conformance runner. Starts the plugin command as a runtime starts a
 * pre-installed plugin (fd 3, NRI_PLUGIN_NAME/IDX/SOCKET), or with `--socket PATH` listens there
 * for a plugin started by the command (pointed at PATH) or by other means. Prints a table per
 * flavour, or `--json`; `--junit FILE` writes JUnit XML too. Exit status 1 on any failure.
 */
export async function runTestPlugin(args: string[], print: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      name: { type: "string" },
      idx: { type: "string" },
      socket: { type: "string" },
      flavour: { type: "string" },
      json: { type: "boolean" },
      junit: { type: "string" },
      config: { type: "string" },
      "request-timeout": { type: "string" },
      "registration-timeout": { type: "string" },
      "gone-timeout": { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  const command = positionals;
  if (values.socket === undefined && command.length === 0) {
    throw new Error(`nri-wire: test-plugin needs a plugin command after --, or --socket\nusage: ${TEST_PLUGIN_USAGE}`);
  }
  const flavours = (values.flavour ?? FLAVOURS.join(",")).split(",").map((f) => {
    if (!(FLAVOURS as readonly string[]).includes(f)) throw new Error(`nri-wire: unknown flavour "${f}": use ${FLAVOURS.join(", ")}`);
    return f as Flavour;
  });
  const expected = { ...(values.name === undefined ? {} : { name: values.name }), ...(values.idx === undefined ? {} : { idx: values.idx }) };
  const starter =
    values.socket !== undefined
      ? socketStarter(values.socket, command.length === 0 ? undefined : command, expected)
      : launchStarter(command, values.name ?? "test-plugin", values.idx ?? "50");
  const requestTimeoutMs = ms("request-timeout", values["request-timeout"]);
  const registrationTimeoutMs = ms("registration-timeout", values["registration-timeout"]);
  const goneTimeoutMs = ms("gone-timeout", values["gone-timeout"]);
  const report = await runConformance({
    starter,
    flavours,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    ...(registrationTimeoutMs === undefined ? {} : { registrationTimeoutMs }),
    ...(goneTimeoutMs === undefined ? {} : { goneTimeoutMs }),
    ...(values.config === undefined ? {} : { config: values.config }),
  });
  print(values.json === true ? formatJson(report) : formatTable(report));
  if (values.junit !== undefined) await writeFile(values.junit, formatJunit(report));
  return report.passed ? 0 : 1;
}
