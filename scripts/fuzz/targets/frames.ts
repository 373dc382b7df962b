import { FrameBudget } from "../../../src/ttrpc/budget.js";
import { ProtocolError } from "../../../src/ttrpc/errors.js";
import { DEFAULT_MAX_DATA_LENGTH, FIRST_BODY_CAPACITY, FrameDecoder, HEADER_LENGTH, encodeFrame } from "../../../src/ttrpc/frame.js";
import type { Corpus } from "../corpus.js";
import { mutate, mutateBytes, randomChunks } from "../mutate.js";
import type { Rng } from "../rng.js";
import { EMPTY, Finding, type FuzzTarget, concatAll, copyOf, defineTarget, feedChunks, describe, expectError, same, u32 } from "../target.js";

/** A frame stream as chunks, its limit, and the frame body sent after it to see the decoder still works. */
type FramesInput = { readonly max: number; readonly chunks: readonly Uint8Array[]; readonly after: Uint8Array };

interface PlainFrame {
  streamId: number;
  type: number;
  flags: number;
  data: Uint8Array;
  oversize: number;
}

/** The frames of a whole byte string, read the obvious way, and whether it ends inside a frame. */
function naiveFrames(b: Uint8Array, max: number): { frames: PlainFrame[]; truncated: boolean } {
  const frames: PlainFrame[] = [];
  let off = 0;
  while (b.length - off >= HEADER_LENGTH) {
    const length = u32(b, off);
    const f = { streamId: u32(b, off + 4), type: b[off + 8]!, flags: b[off + 9]!, data: EMPTY, oversize: 0 };
    off += HEADER_LENGTH;
    if (length > max) {
      frames.push({ ...f, oversize: length });
      if (b.length - off < length) return { frames, truncated: true };
      off += length;
      continue;
    }
    if (b.length - off < length) return { frames, truncated: true };
    frames.push({ ...f, data: b.subarray(off, off + length) });
    off += length;
  }
  return { frames, truncated: off < b.length };
}

/** Length fields a peer might announce for a frame with `left` bytes after its header. */
function frameLength(rng: Rng, left: number, max: number): number {
  return rng.pick([left + 1 + rng.int(1000), 0xffffffff, max + 1, max, 0, rng.u32(), Math.min(max, left + 1 + rng.int(1 << 20))]);
}

/** A stream of 1 to 6 frames around valid and mutated envelopes, one length field perhaps rewritten. */
function drawStream(rng: Rng, envelopes: readonly Uint8Array[], max: number): Uint8Array {
  const frames: Uint8Array[] = [];
  const count = 1 + rng.int(6);
  for (let k = 0; k < count; k++) {
    // Bodies are opaque to the frame decoder: byte mutations change their lengths, which is what matters.
    const body = rng.chance(0.5) ? mutate(rng, rng.pick(envelopes), envelopes, false) : rng.pick(envelopes);
    const id = rng.pick([1, 3, 2, 0, 0xffffffff, rng.u32()]);
    frames.push(encodeFrame(id, rng.chance(0.8) ? 1 + rng.int(3) : rng.int(256), rng.int(8), body));
  }
  let stream = concatAll(frames);
  if (rng.chance(0.5)) {
    // Rewrite one frame's length field: past the end, 2^32 - 1, just over the limit, ...
    let at = 0;
    for (let k = rng.int(count); k > 0; k--) at += frames[count - 1 - k]!.length;
    at = Math.min(at, stream.length - HEADER_LENGTH);
    if (at >= 0) {
      stream = copyOf(stream);
      new DataView(stream.buffer).setUint32(at, frameLength(rng, stream.length - at - HEADER_LENGTH, max));
    }
  }
  return rng.chance(0.3) ? mutateBytes(rng, stream, envelopes) : stream;
}

/** ttrpc FrameDecoder: any chunking of mutated frame streams, against a whole-buffer reading. */
export function framesTarget(corpus: Corpus): FuzzTarget {
  const envelopes = [...corpus.requests, ...corpus.responses];
  return defineTarget<FramesInput>(
    {
      name: "ttrpc frames",
      errorClass: "none while decoding (an oversized frame is reported and skipped); end(): ProtocolError `ttrpc: truncated frame: ...`",
      afterError: "usable: after an oversized frame it decodes the next; end() changes nothing",
      draw(rng, kept) {
        const max = rng.chance(0.7) ? DEFAULT_MAX_DATA_LENGTH : rng.int(300);
        const stream = kept.length > 0 && rng.chance(0.1) ? mutateBytes(rng, concatAll(rng.pick(kept).chunks), envelopes) : drawStream(rng, envelopes, max);
        return { max, chunks: randomChunks(rng, stream), after: rng.pick(envelopes).subarray(0, max) };
      },
      check({ max, chunks, after }, probe) {
        const budget = new FrameBudget();
        const d = new FrameDecoder({ maxDataLength: max, budget });
        const got: PlainFrame[] = [];
        let fed = 0;
        const thrown = feedChunks(probe, chunks, (c) => {
          for (const f of d.decode(c)) got.push({ streamId: f.streamId, type: f.type, flags: f.flags, data: f.data, oversize: f.oversize });
          fed += c.length;
          if (d.buffered > Math.max(FIRST_BODY_CAPACITY, 2 * fed)) {
            throw new Finding(`holds ${d.buffered} bytes for a partial frame after ${fed} bytes of input`);
          }
        });
        if (thrown instanceof Finding) throw thrown;
        if (thrown !== undefined) throw new Finding(`decode threw ${describe(thrown)}`, { cause: thrown });
        const want = naiveFrames(concatAll(chunks), max);
        if (got.length !== want.frames.length) throw new Finding(`${got.length} frames, a whole-buffer reading finds ${want.frames.length}`);
        got.forEach((f, i) => {
          const w = want.frames[i]!;
          if (f.streamId !== w.streamId || f.type !== w.type || f.flags !== w.flags || f.oversize !== w.oversize || !same(f.data, w.data)) {
            throw new Finding(`frame ${i} differs from the whole-buffer reading`);
          }
        });
        let truncated: string | undefined;
        try {
          d.end();
        } catch (e) {
          expectError(e, (x) => x instanceof ProtocolError && x.message.startsWith("ttrpc: truncated frame: "), "end()");
          truncated = (e as Error).message;
        }
        if ((truncated !== undefined) !== want.truncated) throw new Finding(`end() ${truncated !== undefined ? "reported" : "missed"} a truncated frame`);
        if (truncated === undefined) {
          // Still usable: a valid frame decodes exactly.
          const valid = encodeFrame(7, 2, 0, after);
          const again = d.decode(valid);
          if (again.length !== 1 || again[0]!.streamId !== 7 || !same(again[0]!.data, after)) {
            throw new Finding("a valid frame after the input did not decode");
          }
        }
        d.dispose();
        if (budget.used !== 0) throw new Finding(`${budget.used} budget bytes still reserved after dispose()`);
        if (truncated !== undefined) return { error: truncated };
        const oversize = got.find((f) => f.oversize !== 0);
        return oversize === undefined ? "ok" : { error: `oversized frame of ${oversize.oversize} bytes skipped` };
      },
    },
    { max: "number", chunks: "chunks", after: "bytes" },
  );
}
