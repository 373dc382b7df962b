import { FrameDecoder, encodeFrame } from "../src/ttrpc/frame.js";

/**
 * Frames/s and MB/s of the frame decoder over an 8 MiB stream of equal frames. With `views` the
 * consumer also asks every frame for its `data` view, as a consumer that keeps payloads would;
 * without, it reads the frame's range in place, as the ttrpc client and server do.
 */
export function decoderThroughput(payload: number, chunkSize: number, ms: number, views = false): { framesPerSec: number; mbPerSec: number } {
  const frame = encodeFrame(1, 1, 0, new Uint8Array(payload).fill(7));
  const count = Math.max(1, Math.floor((8 << 20) / frame.length));
  const stream = new Uint8Array(count * frame.length);
  for (let i = 0; i < count; i++) stream.set(frame, i * frame.length);
  const chunks: Uint8Array[] = [];
  for (let o = 0; o < stream.length; o += chunkSize) chunks.push(Buffer.from(stream.buffer, o, Math.min(chunkSize, stream.length - o)));
  const decoder = new FrameDecoder();
  let frames = 0;
  let bytes = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    for (const c of chunks) {
      const out = decoder.decode(c);
      if (views) for (let i = 0; i < out.length; i++) bytes += out[i]!.data.length;
      else for (let i = 0; i < out.length; i++) bytes += out[i]!.length;
      frames += out.length;
    }
  }
  const s = (performance.now() - t0) / 1000;
  return { framesPerSec: frames / s, mbPerSec: bytes / s / 1e6 };
}
