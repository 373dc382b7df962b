import { parseArgs } from "node:util";
import { CaptureProxy } from "../nri/capture-proxy.js";
import { formatRecord } from "./decode.js";

/** Usage of `nri-wire record`. */
export const RECORD_USAGE = "nri-wire record --listen PATH --upstream PATH --out FILE [--decode [--pretty]] [--once]";

/**
 * `nri-wire record`: a transparent proxy from `--listen` to the runtime socket `--upstream`
 * recording each connection as a capture (`--out FILE`: FILE.index.json, FILE.p2r.bin,
 * FILE.r2p.bin; later connections FILE-2.*, ...). `--decode` prints the traffic as
 * `nri-wire decode` would, live. Runs until SIGINT or SIGTERM, or with `--once` until the first
 * connection ends. Progress goes to stderr; stdout carries only decoded records.
 */
export async function runRecord(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      listen: { type: "string" },
      upstream: { type: "string" },
      out: { type: "string" },
      decode: { type: "boolean" },
      pretty: { type: "boolean" },
      once: { type: "boolean" },
    },
    strict: true,
  });
  const { listen, upstream, out } = values;
  if (listen === undefined || upstream === undefined || out === undefined || positionals.length > 0) {
    throw new Error(`nri-wire: record needs --listen, --upstream and --out\nusage: ${RECORD_USAGE}`);
  }
  const pretty = values.pretty === true;
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const proxy = new CaptureProxy({
    listen,
    upstream,
    out,
    ...(values.decode === true ? { onRecord: (session: string, r: object) => process.stdout.write(`${formatRecord({ session, ...r } as never, pretty)}\n`) } : {}),
    onSession: (s) => {
      process.stderr.write(`record: ${s.session}: wrote ${s.indexPath} (${s.bytes.p2r} bytes plugin → runtime, ${s.bytes.r2p} bytes runtime → plugin)\n`);
      if (values.once === true) stop();
    },
    onError: (e) => process.stderr.write(`${e.message}\n`),
  });
  await proxy.start();
  process.stderr.write(`record: listening on ${listen}, forwarding to ${upstream}\n`);
  const onSignal = (): void => stop();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  await stopped;
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  await proxy.close();
  return 0;
}
