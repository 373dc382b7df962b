/**
 * `npm run demo`: decodes a real CreateContainer call recorded between the Go NRI runtime and a
 * Go plugin, byte for byte, with nri-wire's ttrpc codec and generated types, re-encodes it, and
 * prints what it carried.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { FrameDecoder, decodeRequest, decodeResponse } from "../src/ttrpc/index.js";
import { ConfigureResponseSchema, CreateContainerRequestSchema, CreateContainerResponseSchema } from "../src/v1alpha1.js";
import { formatEventMask } from "../src/index.js";

const vectors = resolve(import.meta.dirname, "../test/fixtures/vectors");
const r2p = readFileSync(resolve(vectors, "new-runtime--new-plugin.r2p.bin"));
const p2r = readFileSync(resolve(vectors, "new-runtime--new-plugin.p2r.bin"));

/** The ttrpc frames of one mux connection in one direction of a recorded session. */
function framesOf(bytes: Uint8Array, conn: number) {
  const decoder = new FrameDecoder();
  const frames = [];
  for (let o = 0; o + 8 <= bytes.length; ) {
    const id = (bytes[o]! << 24) | (bytes[o + 1]! << 16) | (bytes[o + 2]! << 8) | bytes[o + 3]!;
    const len = ((bytes[o + 4]! << 24) | (bytes[o + 5]! << 16) | (bytes[o + 6]! << 8) | bytes[o + 7]!) >>> 0;
    if (id === conn) frames.push(...decoder.decode(bytes.subarray(o + 8, o + 8 + len)));
    o += 8 + len;
  }
  return frames;
}

const calls = framesOf(r2p, 1).map((f) => ({ id: f.streamId, req: decodeRequest(f.data) }));
const create = calls.find((c) => c.req.method === "CreateContainer")!;
const answer = framesOf(p2r, 1).find((f) => f.streamId === create.id)!;
const request = fromBinary(CreateContainerRequestSchema, create.req.payload);
const response = fromBinary(CreateContainerResponseSchema, decodeResponse(answer.data).payload);
const configure = framesOf(p2r, 1).find((f) => f.streamId === 1)!;

console.log(`recorded session: Go runtime (containerd/nri v0.12.2) -> Go plugin, ${r2p.length + p2r.length} bytes on the wire`);
const events = fromBinary(ConfigureResponseSchema, decodeResponse(configure.data).payload).events;
console.log(`plugin subscribed to (mask ${events}): ${formatEventMask(events)}`);
console.log(`\n${create.req.service}/${create.req.method} on stream ${create.id}, timeout ${(create.req.timeoutNano / 1e6).toFixed(1)} ms`);
console.log(`  pod       ${request.pod?.namespace}/${request.pod?.name} (${request.pod?.id})`);
console.log(`  container ${request.container?.name} (${request.container?.id}), ${request.container?.mounts.length} mounts, args ${JSON.stringify(request.container?.args)}`);
const same = Buffer.compare(Buffer.from(toBinary(CreateContainerRequestSchema, request)), Buffer.from(create.req.payload)) === 0;
console.log(`  re-encoded by nri-wire: ${same ? "identical to the recorded bytes" : "different bytes (same message)"} (${create.req.payload.length} bytes)`);
console.log(`\nthe plugin answered:\n  ${toJsonString(CreateContainerResponseSchema, response)}`);
