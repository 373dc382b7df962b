import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Capture, decodeCapture } from "../../src/capture/capture-file.js";
import { type SessionRecord, SessionDecoder } from "../../src/capture/session-decoder.js";
import { encodeMuxFrames } from "../../src/mux/trunk-frame.js";
import { encodeRequest } from "../../src/ttrpc/envelope.js";
import { encodeFrame } from "../../src/ttrpc/frame.js";
import { runs } from "../support/fc.js";
import { RECORDED_LEGACY_EVENTS, STATE_CHANGE_EVENTS, enumName } from "../support/lifecycle-events.js";
import {
  type GoldenMessage,
  SESSIONS,
  decodedFields,
  expectedFields,
  loadCapture,
  loadGolden,
  withByte,
  withInserted,
  withRemoved,
  withTruncated,
} from "./capture-support.js";

/*
 * The recorded sessions between the Go reference runtime and plugins, decoded from their
 * capture files (the .index.json and the two .bin files) and checked field by field against
 * NAME.frames.json, the view the recording tool made with the Go descriptors. Then damaged
 * copies: every kind of damage is reported with its offset and decoding goes on.
 */

const messages = (rs: SessionRecord[]): SessionRecord[] => rs.filter((r) => r.type !== undefined);

/** The Plugin methods only dedicated-era peers have (the rest of the lifecycle always had its own call). */
const DEDICATED = STATE_CHANGE_EVENTS;

/** StateChangeEvent.event names as recorded, and the dedicated call each stands for. */
const EVENT_CALLS: Record<string, string> = Object.fromEntries([...STATE_CHANGE_EVENTS].map((m) => [enumName(m), m]));

describe.each(SESSIONS)("decoding the recorded session %s", (session) => {
  const capture = loadCapture(session);
  const golden = loadGolden(session).messages;
  const records = decodeCapture(capture);

  it("decodes every message the reference recorded, in order, with no error", () => {
    expect(records.filter((r) => r.error !== undefined)).toEqual([]);
    expect(records.map((r) => [r.dir, r.conn, r.stream, r.type])).toEqual(golden.map((g) => [g.dir, g.connId, g.streamId, g.typeName]));
  });

  it.each(golden.map((g) => [g.order, g] as const))("message %i: frame fields, call and payload as protobuf JSON match the recording", (_, g) => {
    const r = records[g.order]!;
    expect(decodedFields(r)).toEqual(expectedFields(g));
    expect(r.status === undefined ? undefined : { code: r.status.code, message: r.status.message }).toEqual(g.status);
  });

  it("times every message by the read that completed it", () => {
    const chunks = new Map(capture.index.chunks.map((c) => [c.seq, c]));
    for (const g of golden) {
      const r = records[g.order]!;
      expect(r.t_ns).toBe(g.doneTNs);
      expect(r.time).toBe(chunks.get(g.doneChunkSeq)!.time);
    }
  });

  it("names the revision, the calls and, for StateChange, the dedicated call", () => {
    for (const g of golden) {
      const r = records[g.order]!;
      expect(r.revision).toBe("v1alpha1");
      const era = g.method === "StateChange" ? "statechange" : g.service.endsWith(".Plugin") && DEDICATED.has(g.method) ? "dedicated" : "common";
      expect([g.order, r.calls]).toEqual([g.order, era]);
      if (g.method !== "StateChange") expect(r.translatesTo).toBeUndefined();
    }
    const stateChanges = golden.filter((g) => g.method === "StateChange" && g.typeName === "request");
    for (const g of stateChanges) {
      const event = (g.payload as { event: string }).event;
      expect(records[g.order]!.translatesTo).toBe(EVENT_CALLS[event]);
      const answer = golden.find((a) => a.typeName === "response" && a.connId === g.connId && a.streamId === g.streamId)!;
      expect(records[answer.order]!.translatesTo).toBe(EVENT_CALLS[event]);
    }
  });
});

describe("the legacy plugin session", () => {
  const records = decodeCapture(loadCapture("new-runtime--legacy-plugin"));

  it("shows the UNIMPLEMENTED answer to RunPodSandbox and the fallback to StateChange", () => {
    const conn1 = messages(records).filter((r) => r.conn === 1 && r.dir === "p2r" && r.status !== undefined);
    expect(conn1).toEqual([
      expect.objectContaining({ stream: 5, method: "RunPodSandbox", calls: "dedicated", status: { code: 12, name: "unimplemented", message: "method RunPodSandbox" } }),
    ]);
    expect(conn1[0]).not.toHaveProperty("payload");
    const calls = messages(records).filter((r) => r.dir === "r2p" && r.type === "request" && r.conn === 1);
    expect(calls.map((r) => r.translatesTo ?? r.method)).toEqual(["Configure", "Synchronize", "RunPodSandbox", ...RECORDED_LEGACY_EVENTS]);
  });
});

describe("damaged copies of new-runtime--new-plugin", () => {
  const session = "new-runtime--new-plugin";
  const capture = loadCapture(session);
  const { messages: golden, muxFrames } = loadGolden(session);
  /** r2p mux frame 3 carries the RunPodSandbox request (stream 5), frame 4 CreateContainer. */
  const frame3 = muxFrames.r2p[3]!;
  const frame4 = muxFrames.r2p[4]!;
  const run = golden.find((g) => g.method === "RunPodSandbox" && g.typeName === "request")!;
  const runAnswer = golden.find((g) => g.method === "RunPodSandbox" && g.typeName === "response")!;
  const errors = (rs: SessionRecord[]): Record<string, unknown>[] =>
    rs.filter((r) => r.error !== undefined).map((r) => ({ dir: r.dir, offset: r.offset, error: r.error, ...(r.skipped === undefined ? {} : { skipped: r.skipped }) }));

  /** Every golden message but `lost` is decoded as recorded (offsets of `dir` past `at` moved by `shift`). */
  function expectOthersIntact(rs: SessionRecord[], lost: readonly GoldenMessage[], shift?: { dir: string; at: number; by: number }): void {
    const good = messages(rs).filter((r) => r.error === undefined).map(decodedFields);
    const want = golden
      .filter((g) => !lost.includes(g))
      .map((g) => expectedFields(g, shift !== undefined && g.dir === shift.dir && g.fileOffsets[0]! > shift.at ? shift.by : 0));
    expect(good).toEqual(want);
  }

  /** The RunPodSandbox answer, once its request is lost. */
  const unanswered = { dir: "p2r", offset: runAnswer.fileOffsets[0], error: "ttrpc: response on conn 1 stream 5 answers no request seen" };

  it.each([
    [
      "a mux header with a bad conn id: the frame is skipped to the next one, the unanswerable response is flagged",
      frame3.offset,
      0x7f,
      [{ dir: "r2p", offset: 953, skipped: 362, error: "mux: invalid frame header at offset 953: conn id 2130706433 is not 1 or 2: skipped 362 bytes to the next frame at offset 1315" }, unanswered],
    ],
    [
      "a mux length that runs over the next frame is caught by the frame inside it",
      frame3.offset + 6,
      0x11,
      [{ dir: "r2p", offset: 953, skipped: 362, error: "mux: invalid frame header at offset 953: length 4450 runs past the frame at offset 1315: skipped 362 bytes to the next frame at offset 1315" }, unanswered],
    ],
    [
      "a ttrpc header with an unknown frame type: that frame is skipped, the rest of the conn decodes",
      run.fileOffsets[0]! + 8,
      9,
      [unanswered, { dir: "r2p", offset: 961, skipped: 354, error: "ttrpc: invalid frame header at offset 961 on conn 1: type 9: skipped 354 bytes to the next frame at offset 1323" }],
    ],
    [
      "a ttrpc length 64 KiB too long is caught by the good frame inside the extent it claims",
      run.fileOffsets[0]! + 1,
      1,
      [unanswered, { dir: "r2p", offset: 961, skipped: 354, error: "ttrpc: invalid frame of stream 5 at offset 961 on conn 1: length 65880 runs past a good frame: skipped 354 bytes to the next frame at offset 1323" }],
    ],
  ] as const)("%s", (_title, at, value, want) => {
    const rs = decodeCapture(withByte(capture, "r2p", at, value));
    expect(errors(rs)).toEqual(want);
    expectOthersIntact(rs, [run, runAnswer]);
  });

  it("a payload that is not protobuf: the message keeps its frame fields and hex, with the decode error", () => {
    const answer = golden.find((g) => g.method === "Configure" && g.typeName === "response")!;
    const rs = decodeCapture(withByte(capture, "p2r", answer.fileOffsets[0]! + 14, 0xff));
    const bad = rs.filter((r) => r.error !== undefined);
    expect(bad).toEqual([
      expect.objectContaining({
        dir: "p2r",
        offset: 106,
        conn: 1,
        stream: 1,
        type: "response",
        method: "Configure",
        payloadType: "nri.pkg.api.v1alpha1.ConfigureResponse",
        payloadHex: "10ffff",
        error: "payload: invalid nri.pkg.api.v1alpha1.ConfigureResponse: premature EOF",
      }),
    ]);
    expectOthersIntact(rs, [answer]);
  });

  it("garbage between frames is skipped by its exact length and nothing is lost", () => {
    const rs = decodeCapture(withInserted(capture, "r2p", frame3.offset, new Uint8Array(37).fill(0xee)));
    expect(errors(rs)).toEqual([
      {
        dir: "r2p",
        offset: 953,
        skipped: 37,
        error: "mux: invalid frame header at offset 953: conn id 4008636142 is not 1 or 2: skipped 37 bytes to the next frame at offset 990",
      },
    ]);
    expectOthersIntact(rs, [], { dir: "r2p", at: frame3.offset, by: 37 });
  });

  it("a frame missing from the middle loses only its message", () => {
    const rs = decodeCapture(withRemoved(capture, "r2p", frame3.offset, frame4.offset));
    expect(errors(rs)).toEqual([unanswered]);
    expectOthersIntact(rs, [run, runAnswer], { dir: "r2p", at: frame3.offset, by: frame3.offset - frame4.offset });
  });

  it("a capture cut inside the last frame reports both layers cut short, after everything before it", () => {
    const last = muxFrames.r2p.at(-1)!;
    const rs = decodeCapture(withTruncated(capture, "r2p", last.offset + 100));
    const lastCall = golden.find((g) => g.dir === "r2p" && g.fileOffsets[0] === last.offset + 8)!;
    const lastAnswer = golden.find((g) => g.typeName === "response" && g.streamId === lastCall.streamId && g.connId === lastCall.connId)!;
    expect(errors(rs)).toEqual([
      { dir: "p2r", offset: lastAnswer.fileOffsets[0], error: "ttrpc: response on conn 1 stream 31 answers no request seen" },
      { dir: "r2p", offset: 10170, skipped: 0, error: "mux: truncated frame at offset 10170: ended after 92 of 357 payload bytes for conn 1" },
      {
        dir: "r2p",
        offset: 10178,
        skipped: 92,
        error: "ttrpc: truncated frame of stream 31 at offset 10178 on conn 1: ended after 82 of 347 data bytes: skipped 92 bytes to the end",
      },
    ]);
    expectOthersIntact(rs, [lastCall, lastAnswer]);
  });

  it("an index that disagrees with the files: the bytes win and each disagreement is reported", () => {
    const chunks = capture.index.chunks.filter((c) => c.seq !== 5);
    const rs = decodeCapture({ index: { ...capture.index, chunks }, bytes: capture.bytes });
    // The Synchronize call's bytes now arrive with chunk 7, after the plugin's answer to it.
    const sync = golden.filter((g) => g.method === "Synchronize");
    expect(errors(rs)).toEqual([
      { dir: "p2r", offset: sync[1]!.fileOffsets[0], error: "ttrpc: response on conn 1 stream 3 answers no request seen" },
      { dir: "r2p", offset: 130, error: "capture: chunk 7 starts at offset 953, the r2p bytes before it end at 130" },
    ]);
    expectOthersIntact(rs, [sync[1]!]);
    const shortFile: Capture = { index: capture.index, bytes: { ...capture.bytes, p2r: capture.bytes.p2r.subarray(0, 600) } };
    const errs = errors(decodeCapture(shortFile));
    expect(errs.filter((e) => (e.error as string).startsWith("capture:"))).toEqual([
      { dir: "p2r", offset: 600, error: "capture: the p2r file ends at offset 600, chunk 33 and later ones name bytes up to 674" },
    ]);
  });

  it("one damaged byte anywhere: no throw, damage reported inside the file, and only the two frames around it are lost", () => {
    const dirs = ["p2r", "r2p"] as const;
    fc.assert(
      fc.property(fc.constantFrom(...dirs), fc.nat(), fc.integer({ min: 0, max: 255 }), (dir, at0, value) => {
        const bytes = capture.bytes[dir];
        const at = at0 % bytes.length;
        fc.pre(bytes[at] !== value);
        const rs = decodeCapture(withByte(capture, dir, at, value));
        for (const r of rs) {
          expect(r.offset).toBeGreaterThanOrEqual(0);
          expect(r.offset).toBeLessThanOrEqual(capture.bytes[r.dir].length);
        }
        // The mux frame holding the byte and the one after it may be lost, with their answers.
        const frames = muxFrames[dir];
        let k = 0;
        while (k + 1 < frames.length && frames[k + 1]!.offset <= at) k++;
        const hit = new Set([frames[k]!.n, frames[k + 1]?.n]);
        const direct = golden.filter((g) => g.dir === dir && g.muxFrames.some((n) => hit.has(n)));
        const partners = golden.filter((g) => direct.some((d) => d.connId === g.connId && d.streamId === g.streamId));
        const lost = new Set([...direct, ...partners]);
        const good = new Set(messages(rs).filter((r) => r.error === undefined).map((r) => JSON.stringify(decodedFields(r))));
        for (const g of golden) if (!lost.has(g)) expect(good.has(JSON.stringify(expectedFields(g)))).toBe(true);
      }),
      { numRuns: runs(2) },
    );
  });
});

describe("SessionDecoder fed live, without the whole capture", () => {
  const request = (stream: number, method: string): Uint8Array =>
    encodeFrame(stream, 1, 0, encodeRequest({ service: "nri.pkg.api.v1beta1.Plugin", method, payload: new Uint8Array(0), timeoutNano: 0, metadata: [] }));

  it("decodes a message as soon as its last byte arrives, one byte at a time", () => {
    const d = new SessionDecoder();
    const bytes = encodeMuxFrames(1, request(1, "Shutdown"));
    const seen: number[] = [];
    bytes.forEach((b, i) => {
      if (d.push("r2p", Uint8Array.of(b), i).length > 0) seen.push(i);
    });
    expect(seen).toEqual([bytes.length - 1]);
    expect(d.end("r2p", bytes.length)).toEqual([]);
  });

  it("waits for the bytes that tell whether garbage ended, then resyncs", () => {
    const d = new SessionDecoder();
    const garbage = new Uint8Array(20).fill(0xab);
    const good = encodeMuxFrames(1, request(3, "Shutdown"));
    expect(d.push("r2p", garbage, 1)).toEqual([]);
    const out = d.push("r2p", good, 2);
    // The good frame is the last one: whether it is followed by a header is known only at the end.
    expect(out).toEqual([]);
    const done = d.end("r2p", 3);
    expect(done.map((r) => r.error ?? r.method)).toEqual(["mux: invalid frame header at offset 0: conn id 2880154539 is not 1 or 2: skipped 20 bytes to the next frame at offset 20", "Shutdown"]);
    expect(done[1]).toMatchObject({ revision: "v1beta1", calls: "common", stream: 3, t_ns: 3 });
  });
});
