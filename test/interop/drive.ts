import { create, fromJson, toJson, type DescMessage, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { type Peer, socketDir, startPeer, tsCommand } from "./support.js";
import { SLOW_START_GO_RUNTIME } from "../support/slow-start.js";
import { join } from "node:path";

/** Options of `nri-peer drive` (see drive.go). */
export interface DriveOptions {
  plugins?: number;
  updates?: number;
  podAnnotations?: Record<string, string>;
  runtimeName?: string;
  runtimeVersion?: string;
}

/** One line of `nri-peer drive` output. */
export interface DriveLine {
  ready?: boolean;
  synchronize?: JsonValue[];
  unsolicited?: JsonValue[];
  event?: string;
  ok?: boolean;
  error?: string;
  adjust?: JsonValue;
  update?: JsonValue[];
  evict?: JsonValue[];
  deprecations?: string[];
}

/** A finished drive: the runtime's lines and exit code, and its stderr. */
export interface Drive {
  readonly code: number | null;
  readonly lines: DriveLine[];
  readonly stderr: string;
  /** The line of `event` (throws if there is none). */
  event(name: string): DriveLine;
}

/** Starts the Go runtime `nri-peer drive` on a fresh socket; `plugins` gets the socket path once it listens. */
export async function drive(goBinary: string, o: DriveOptions, plugins: (socket: string) => Promise<unknown> | unknown): Promise<Drive> {
  const socket = join(socketDir(), "nri.sock");
  const args = ["drive", "--socket", socket, "--plugins", String(o.plugins ?? 1), "--updates", String(o.updates ?? 0), ...SLOW_START_GO_RUNTIME];
  if (o.podAnnotations !== undefined) args.push("--pod-annotations", JSON.stringify(o.podAnnotations));
  if (o.runtimeName !== undefined) args.push("--runtime-name", o.runtimeName);
  if (o.runtimeVersion !== undefined) args.push("--runtime-version", o.runtimeVersion);
  const runtime: Peer = startPeer([goBinary, []], args);
  await runtime.waitFor((l) => l.includes('"ready":true'));
  await plugins(socket);
  const code = await runtime.closed;
  const lines = runtime.lines.map((l) => JSON.parse(l) as DriveLine);
  return {
    code,
    lines,
    stderr: runtime.stderr(),
    event(name) {
      const line = lines.find((l) => l.event === name);
      if (line === undefined) throw new Error(`drive: no line for ${name}; stderr:\n${runtime.stderr()}`);
      return line;
    },
  };
}

/** Drops empty objects and arrays, which Go's merged answers carry and protobuf-es leaves out. */
function prune(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(prune);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const p = prune(x);
      if (p !== null && typeof p === "object" && Object.keys(p).length === 0) continue;
      out[k] = p;
    }
    return out;
  }
  return v;
}

/** A message Go printed (see drive.go's raw), read with the schema, as comparable JSON. */
export function goMessage(schema: DescMessage, json: JsonValue | undefined): unknown {
  return prune(toJson(schema, fromJson(schema, json ?? {})));
}

/** A message we expect, as the same comparable JSON. */
export function expected<Desc extends DescMessage>(schema: Desc, init: MessageInitShape<Desc>): unknown {
  return prune(toJson(schema, create(schema, init)));
}

/** The command that runs an example plugin. */
export function exampleCommand(name: string): [string, string[]] {
  return tsCommand(`examples/${name}.ts`);
}
