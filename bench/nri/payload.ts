/**
 * The recorded request: the first CreateContainer a containerd v2.4.2 runtime sent a plugin in a
 * session captured with `nri-wire record` (bench/fixtures/containerd-session.*, made by
 * bench/fixtures/record.ts), taken from the capture as `nri-wire decode` reads it and written in
 * binary where both bench runtimes read it.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fromJson, toBinary } from "@bufbuild/protobuf";
import { CreateContainerRequestSchema as V1alpha1Request } from "../../gen/v1alpha1/api_pb.js";
import { CreateContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { decodeCapture, readCapture } from "../../src/capture/capture-file.js";
import { fromBinary } from "../../src/api/messages.js";

export const FIXTURE = resolve(import.meta.dirname, "../fixtures/containerd-session.index.json");

/** The recorded CreateContainerRequest's bytes (v1alpha1 and v1beta1 read them alike). */
export function recordedRequestBytes(index = FIXTURE): Uint8Array {
  const records = decodeCapture(readCapture(index));
  const create = records.find((r) => r.type === "request" && r.method === "CreateContainer" && r.dir === "r2p");
  if (create?.payload === undefined) throw new Error(`bench: ${index}: no CreateContainer request in the capture`);
  const raw = toBinary(V1alpha1Request, fromJson(V1alpha1Request, create.payload));
  // The bench runtimes decode it as v1beta1: it must come out the same.
  const again = toBinary(CreateContainerRequestSchema, fromBinary(CreateContainerRequestSchema, raw));
  if (Buffer.compare(Buffer.from(raw), Buffer.from(again)) !== 0) throw new Error(`bench: ${index}: the CreateContainer request does not read the same as v1beta1`);
  return raw;
}

/** Writes the recorded request where both runtimes read it. */
export function recordedRequest(dir: string): { path: string; bytes: number } {
  const raw = recordedRequestBytes();
  const path = join(dir, "create-container-recorded.bin");
  writeFileSync(path, raw);
  return { path, bytes: raw.length };
}
