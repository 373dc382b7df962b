import { MuxError } from "../../../src/mux/errors.js";
import { MAX_READ_PAYLOAD, MuxDecoder, encodeMuxFrames } from "../../../src/mux/trunk-frame.js";
import type { Corpus } from "../corpus.js";
import { mutateBytes, randomChunks } from "../mutate.js";
import { Finding, type FuzzTarget, concatAll, copyOf, defineTarget, feedChunks, describe, expectError, same, u32 } from "../target.js";

/** A trunk as chunks, and the decoder's payload limit. */
type MuxInput = { readonly max: number; readonly chunks: readonly Uint8Array[] };

/** Every conn's bytes of a trunk read the obvious way, up to a frame over `max`. */
function naiveMux(b: Uint8Array, max: number): { bytes: Map<number, Uint8Array[]>; oversize?: string; truncated: boolean } {
  const bytes = new Map<number, Uint8Array[]>();
  let off = 0;
  while (b.length - off >= 8) {
    const id = u32(b, off);
    const length = u32(b, off + 4);
    off += 8;
    if (length > max) return { bytes, oversize: `mux: frame length ${length} for conn ${id} exceeds maximum ${max}`, truncated: false };
    const end = Math.min(b.length, off + length);
    if (end > off) {
      const list = bytes.get(id);
      if (list === undefined) bytes.set(id, [b.subarray(off, end)]);
      else list.push(b.subarray(off, end));
    }
    if (end < off + length) return { bytes, truncated: true };
    off = end;
  }
  return { bytes, truncated: off < b.length };
}

/** The NRI mux decoder: any chunking of mutated trunks, against a whole-buffer reading. */
export function muxTarget(corpus: Corpus): FuzzTarget {
  return defineTarget<MuxInput>(
    {
      name: "mux",
      errorClass: "MuxError `mux: frame length N for conn C exceeds maximum M`; end(): MuxError `mux: truncated frame: ...`",
      afterError: "poisoned: every later decode() and end() throws the same MuxError (the trunk has lost its framing)",
      draw(rng, kept) {
        const max = rng.chance(0.7) ? MAX_READ_PAYLOAD : rng.int(300);
        let trunk: Uint8Array;
        if (kept.length > 0 && rng.chance(0.1)) trunk = mutateBytes(rng, concatAll(rng.pick(kept).chunks), corpus.trunks);
        else {
          trunk = rng.chance(0.3) ? concatAll([rng.pick(corpus.trunks), rng.pick(corpus.trunks)]) : rng.pick(corpus.trunks);
          if (rng.chance(0.4) && trunk.length >= 8) {
            trunk = copyOf(trunk);
            new DataView(trunk.buffer).setUint32(4, rng.pick([trunk.length - 7 + rng.int(100), 0xffffffff, max + 1, max, rng.u32()]));
          }
          if (rng.chance(0.6)) trunk = mutateBytes(rng, trunk, corpus.trunks);
        }
        return { max, chunks: randomChunks(rng, trunk) };
      },
      check({ max, chunks }, probe) {
        const d = new MuxDecoder(max);
        const got = new Map<number, Uint8Array[]>();
        const error = feedChunks(probe, chunks, (c) => {
          for (const s of d.decode(c)) {
            const list = got.get(s.connId);
            if (list === undefined) got.set(s.connId, [s.data]);
            else list.push(s.data);
          }
        });
        const want = naiveMux(concatAll(chunks), max);
        const all = new Set([...got.keys(), ...want.bytes.keys()]);
        for (const id of all) {
          const g = concatAll(got.get(id) ?? []);
          const w = concatAll(want.bytes.get(id) ?? []);
          // After an error the chunk that raised it gives nothing: what came before must match.
          const ok = error === undefined ? same(g, w) : g.length <= w.length && same(g, w.subarray(0, g.length));
          if (!ok) throw new Finding(`conn ${id} got ${g.length} bytes, a whole-buffer reading finds ${w.length}`);
        }
        if (error !== undefined) {
          expectError(error, (e) => e instanceof MuxError && e.message === want.oversize, "decode");
          // Poisoned: the same error again, even for a valid frame.
          let again: unknown;
          try {
            d.decode(encodeMuxFrames(1, Uint8Array.of(1)));
          } catch (e) {
            again = e;
          }
          if (again === undefined) throw new Finding("decode after a MuxError succeeded");
          if (again !== error) throw new Finding(`decode after a MuxError threw ${describe(again)}`);
          return { error: (error as Error).message };
        }
        if (want.oversize !== undefined) throw new Finding(`missed ${want.oversize}`);
        try {
          d.end();
        } catch (e) {
          expectError(e, (x) => x instanceof MuxError && x.message.startsWith("mux: truncated frame: "), "end()");
          if (!want.truncated) throw new Finding("end() reported a truncated frame that is not");
          return { error: (e as Error).message };
        }
        if (want.truncated) throw new Finding("end() missed a truncated frame");
        const valid = Uint8Array.of(9, 8).subarray(0, max);
        const segs = d.decode(encodeMuxFrames(2, valid, Math.max(1, max)));
        if (!same(concatAll(segs.map((x) => x.data)), valid) || segs.some((x) => x.connId !== 2)) throw new Finding("a valid frame after the input did not decode");
        return "ok";
      },
    },
    { max: "number", chunks: "chunks" },
  );
}
