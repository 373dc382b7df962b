/**
 * The message codec on the messages of an NRI CreateContainer event: the request carrying a
 * realistic pod and container, the empty StartContainer response, and a plugin's typical
 * CreateContainer response (one annotation, one environment variable). Encode, decode and clone
 * µs for the generated code (protoc-gen-nri-wire), protobuf-es reflective toBinary/fromBinary/
 * clone, and Go (protobuf-go proto.Marshal/Unmarshal as ttrpc uses them and proto.Clone, plus
 * vtprotobuf for reference) on the very same bytes. `npx tsx bench/codec.ts` prints this section
 * alone.
 *
 * Each figure is the best round of ROUNDS × CALLS calls (the same method in Go): on a shared
 * machine the best round is the least disturbed one.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type DescMessage, type Message, clone as reflectiveClone, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as beta from "../gen/v1beta1/api_pb.js";
import { messages_v1beta1_api } from "../gen/v1beta1/api_codec.js";
import { goBuild, runPeer } from "../test/interop/support.js";
import { tempDir } from "../test/support/temp.js";
import { type MessageCodec, messageRegistry } from "../src/wire/index.js";

const { clone, codecFor } = messageRegistry([messages_v1beta1_api]);
import { realisticContainer, realisticPod } from "./translate.js";

const ROUNDS = 60;
const CALLS = 200;

/** µs per call of the best round. */
function best(f: () => unknown): number {
  for (let i = 0; i < CALLS * 10; i++) f();
  let b = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) f();
    b = Math.min(b, Number(process.hrtime.bigint() - t) / CALLS / 1000);
  }
  return b;
}

interface Fixture {
  /** File name and Go type name. */
  readonly name: string;
  readonly goType: string;
  readonly label: string;
  readonly schema: DescMessage;
  readonly message: Message;
}

function fixtures(): Fixture[] {
  return [
    {
      name: "create-container-request",
      goType: "CreateContainerRequest",
      label: "CreateContainerRequest (realistic pod and container)",
      schema: beta.CreateContainerRequestSchema,
      message: create(beta.CreateContainerRequestSchema, { pod: realisticPod(), container: realisticContainer() }),
    },
    {
      name: "start-container-response",
      goType: "StartContainerResponse",
      label: "StartContainerResponse (empty)",
      schema: beta.StartContainerResponseSchema,
      message: create(beta.StartContainerResponseSchema),
    },
    {
      name: "create-container-response",
      goType: "CreateContainerResponse",
      label: "CreateContainerResponse (1 annotation, 1 env)",
      schema: beta.CreateContainerResponseSchema,
      message: create(beta.CreateContainerResponseSchema, {
        adjust: { annotations: { "example.com/seen": "true" }, env: [{ key: "EXAMPLE_PLUGIN", value: "1" }] },
      }),
    },
  ];
}

/** The operations measured; vtprotobuf has no clone in containerd/nri. */
const OPS = ["encode", "decode", "clone"] as const;

type Figures = Record<(typeof OPS)[number], number>;

/** One message's figures, µs per call. */
export interface CodecRow {
  readonly label: string;
  readonly bytes: number;
  readonly generated: Figures;
  readonly reflective: Figures;
  readonly go: Figures;
  readonly goVt: { encode: number; decode: number };
}

interface GoLine {
  name: string;
  bytes: number;
  encode_us: number;
  decode_us: number;
  clone_us: number;
  vt_encode_us: number;
  vt_decode_us: number;
}

/** Measures every fixture in TypeScript, then the same bytes in Go. */
export async function codecBench(): Promise<CodecRow[]> {
  const dir = tempDir("nriw-codec-");
  // Two passes, the first only to warm up: a fixture measured right after another one ran
  // partly on code tiered up for the previous one, which made the first pass's small-message
  // figures depend on the fixture order (for the generated codec and protobuf-es alike).
  measureAll(dir);
  const ts = measureAll(dir);
  const bin = goBuild("codec-bench", "codec-bench");
  const run = await runPeer([bin, []], ["--dir", dir, "--rounds", String(ROUNDS), "--n", String(CALLS), ...ts.map((t) => `${t.f.name}=${t.f.goType}`)]);
  if (run.code !== 0) throw new Error(`bench: codec-bench exited ${run.code}: ${run.stderr}`);
  const go = new Map(run.lines.map((l) => JSON.parse(l) as GoLine).map((l) => [l.name, l]));
  return ts.map((t) => {
    const g = go.get(t.f.name);
    if (g === undefined) throw new Error(`bench: codec-bench printed nothing for ${t.f.name}`);
    return {
      label: t.f.label,
      bytes: t.bytes,
      generated: t.generated,
      reflective: t.reflective,
      go: { encode: g.encode_us, decode: g.decode_us, clone: g.clone_us },
      goVt: { encode: g.vt_encode_us, decode: g.vt_decode_us },
    };
  });
}

/** Every fixture measured in TypeScript, its bytes written to `dir` for the Go side. */
function measureAll(dir: string) {
  return fixtures().map((f) => {
    const codec = codecFor(f.schema) as MessageCodec;
    const bytes = toBinary(f.schema, f.message);
    if (Buffer.compare(codec.encode(f.message), bytes) !== 0) throw new Error(`bench: ${f.name}: generated bytes differ from toBinary`);
    writeFileSync(join(dir, `${f.name}.bin`), bytes);
    return {
      f,
      bytes: bytes.length,
      generated: { encode: best(() => codec.encode(f.message)), decode: best(() => codec.decode(bytes)), clone: best(() => clone(f.schema, f.message)) },
      reflective: {
        encode: best(() => toBinary(f.schema, f.message)),
        decode: best(() => fromBinary(f.schema, bytes)),
        clone: best(() => reflectiveClone(f.schema, f.message)),
      },
    };
  });
}

const fmt = (n: number, digits = 2): string => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The section's lines: a table of µs per call with ratios to Go and to protobuf-es. */
export function codecTable(rows: readonly CodecRow[]): string[] {
  const out = [
    `Message codec and clone, µs per call (best of ${ROUNDS} rounds of ${CALLS}); ratios: generated ÷ Go (protobuf-go), generated ÷ protobuf-es reflective.`,
    "",
    "| message | bytes | op | generated | protobuf-es | Go | Go vtproto | ÷ Go | ÷ protobuf-es |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    for (const op of OPS) {
      const vt = op === "clone" ? "–" : fmt(r.goVt[op]);
      out.push(
        `| ${r.label} | ${r.bytes} | ${op} | ${fmt(r.generated[op])} | ${fmt(r.reflective[op])} | ${fmt(r.go[op])} | ${vt} | ×${fmt(r.generated[op] / r.go[op])} | ×${fmt(r.generated[op] / r.reflective[op])} |`,
      );
    }
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  for (const line of codecTable(await codecBench())) console.log(line);
}
