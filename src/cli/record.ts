import { CaptureProxy } from "../capture/capture-proxy.js";
import type { SessionRecord } from "../capture/session-decoder.js";
import { type Command, EXIT } from "./command.js";
import { UsageError } from "./errors.js";
import { formatRecord } from "./decode.js";

/** What `nri-wire record` is told. */
export interface RecordOptions {
  listen: string;
  upstream: string;
  out: string;
  decode?: boolean;
  pretty?: boolean;
  once?: boolean;
}

/**
 * `nri-wire record`: a transparent proxy from `--listen` to the runtime socket `--upstream`
 * recording each connection as a capture (`--out FILE`: FILE.index.json, FILE.p2r.bin,
 * FILE.r2p.bin; later connections FILE-2.*, ...). `--decode` prints the traffic as
 * `nri-wire decode` would, live. Runs until SIGINT or SIGTERM, or with `--once` until the first
 * connection ends. Progress goes to stderr; stdout carries only decoded records.
 */
export async function runRecord(values: RecordOptions): Promise<number> {
  const { listen, upstream, out } = values;
  const pretty = values.pretty === true;
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const proxy = new CaptureProxy({
    listen,
    upstream,
    out,
    ...(values.decode === true ? { onRecord: (session: string, r: SessionRecord) => process.stdout.write(`${formatRecord({ session, ...r }, pretty)}\n`) } : {}),
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
  return EXIT.ok;
}

/** `nri-wire record`. */
export const recordCommand: Command = {
  name: "record",
  summary: "Forward a plugin's NRI socket to a runtime unchanged, recording both directions as a capture.",
  description:
    "Writes FILE.index.json, FILE.p2r.bin and FILE.r2p.bin (later connections FILE-2.*, ...), which\n`nri-wire decode` reads. Runs until SIGINT or SIGTERM, or with --once until the first connection ends.",
  options: {
    listen: { type: "string", value: "PATH", required: true, description: "the socket plugins connect to" },
    upstream: { type: "string", value: "PATH", required: true, description: "the runtime's NRI socket" },
    out: { type: "string", value: "FILE", required: true, description: "capture path prefix" },
    decode: { type: "boolean", description: "print the traffic live, as nri-wire decode does" },
    pretty: { type: "boolean", description: "with --decode: print for people" },
    once: { type: "boolean", description: "stop when the first connection ends" },
  },
  async run(v) {
    const listen = v.listen as string | undefined;
    const upstream = v.upstream as string | undefined;
    const out = v.out as string | undefined;
    if (listen === undefined || upstream === undefined || out === undefined) throw new UsageError("nri-wire record: --listen, --upstream and --out are required");
    return runRecord({ listen, upstream, out, decode: v.decode === true, pretty: v.pretty === true, once: v.once === true });
  },
};
