import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createRegistry, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import type { DescMessage, JsonValue, Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { file_v1alpha1_api } from "../../gen/v1alpha1/api_pb.js";
import { file_v1beta1_api } from "../../gen/v1beta1/api_pb.js";
import { RequestSchema, ResponseSchema } from "../../gen/ttrpc/request_pb.js";
import { hex } from "../support/bytes.js";

/**
 * The recorded sessions between the Go reference runtime and plugins (containerd/nri v0.12.2,
 * test/fixtures/vectors): every NRI payload and every ttrpc envelope decoded with the generated
 * types and checked against what the Go side recorded, then re-encoded to the recorded bytes.
 *
 * JSON: protobuf-es `toJson` with its default options is exactly Go protojson as recorded
 * (lowerCamelCase JSON names such as `NRIVersion`, enum value names, 64-bit integers as decimal
 * strings, fields at their zero value left out, set-but-empty messages kept as `{}`), so the
 * comparison is strict equality with no options and no normalization.
 */

interface RecordedMessage {
  order: number;
  dir: "p2r" | "r2p";
  connId: number;
  streamId: number;
  type: number;
  typeName: string;
  flags: number;
  length: number;
  headerHex: string;
  bodyHex: string;
  service: string;
  method: string;
  timeoutNano?: number;
  status?: { code: number; message: string };
  payloadType?: string;
  payloadHex?: string;
  payload?: JsonValue;
}

interface Session {
  format: string;
  session: string;
  messages: RecordedMessage[];
}

const dir = new URL("../fixtures/vectors/", import.meta.url);
const sessions: Session[] = readdirSync(dir)
  .filter((f) => f.endsWith(".frames.json"))
  .sort()
  .map((f) => JSON.parse(readFileSync(new URL(f, dir), "utf8")) as Session);

const alphaTypes = createRegistry(file_v1alpha1_api);
const betaTypes = createRegistry(file_v1beta1_api);

const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "hex"));

function schemaOf(typeName: string): DescMessage {
  const schema = alphaTypes.getMessage(typeName);
  if (schema === undefined) throw new Error(`test: ${typeName} is not a v1alpha1 message`);
  return schema;
}

/** Entries of every map field, anywhere in the message, that has two entries or more. */
function multiEntryMaps(schema: DescMessage, msg: Message, path = schema.name): string[] {
  const out: string[] = [];
  const r = reflect(schema, msg);
  for (const f of r.fields) {
    if (!r.isSet(f)) continue;
    const here = `${path}.${f.name}`;
    if (f.fieldKind === "message") out.push(...multiEntryMaps(f.message, r.get(f).message, here));
    if (f.fieldKind === "list" && f.listKind === "message") {
      for (const v of r.get(f)) out.push(...multiEntryMaps(f.message, (v as { message: Message }).message, here));
    }
    if (f.fieldKind === "map") {
      const map = r.get(f);
      if (map.size > 1) out.push(`${here}{${[...map.keys()].join(",")}}`);
      if (f.mapKind === "message") {
        for (const v of map.values()) out.push(...multiEntryMaps(f.message, (v as { message: Message }).message, here));
      }
    }
  }
  return out;
}

it("the fixtures hold both recorded sessions", () => {
  expect(sessions.map((s) => s.session)).toEqual(["new-runtime--legacy-plugin", "new-runtime--new-plugin"]);
  for (const s of sessions) expect(s.format).toBe("nri-capture-frames/v1");
});

describe.each(sessions.map((s) => [s.session, s] as const))("session %s", (_name, session) => {
  const payloads = session.messages.filter((m) => m.payloadType !== undefined);
  const withStatus = session.messages.filter((m) => m.status !== undefined);

  it("every message carries an NRI payload or an error status", () => {
    expect(payloads.length + withStatus.length).toBe(session.messages.length);
    expect(payloads.length).toBeGreaterThan(30);
    for (const m of payloads) expect(m.payloadType).toMatch(/^nri\.pkg\.api\.v1alpha1\.[A-Za-z]+$/);
  });

  describe.each(payloads.map((m) => [m.order, m.payloadType, m] as const))("#%i %s", (_order, typeName, m) => {
    const schema = schemaOf(typeName as string);
    const bytes = unhex(m.payloadHex ?? "");
    const decoded = fromBinary(schema, bytes);

    it("decodes to exactly the JSON Go recorded (default toJson options)", () => {
      expect(decoded.$unknown).toBeUndefined();
      expect(toJson(schema, decoded)).toStrictEqual(m.payload);
    });

    it("re-encodes to the recorded bytes", () => {
      // Field order matches Go (both write by field number). Maps could differ: Go writes map
      // entries in random order, protobuf-es in JS key order. The only map with more than one
      // entry in these recordings is FieldOwners.compound {1,6} (int32 keys, which protobuf-es
      // always writes ascending); Go happened to write it in that order too.
      expect(hex(toBinary(schema, decoded))).toBe(m.payloadHex ?? "");
    });

    it("the recorded JSON parses and encodes to the recorded bytes", () => {
      expect(hex(toBinary(schema, fromJson(schema, m.payload ?? null)))).toBe(m.payloadHex ?? "");
    });

    const betaSchema = betaTypes.getMessage(schema.typeName.replace(".v1alpha1.", ".v1beta1."));
    if (betaSchema !== undefined) {
      it("decodes with the v1beta1 type of the same name to the same JSON and bytes", () => {
        const b = fromBinary(betaSchema, bytes);
        expect(b.$unknown).toBeUndefined();
        expect(toJson(betaSchema, b)).toStrictEqual(m.payload);
        expect(hex(toBinary(betaSchema, b))).toBe(m.payloadHex ?? "");
      });
    }
  });

  it("multi-entry maps are rare: only FieldOwners.compound {1,6}", () => {
    const maps = payloads.flatMap((m) => {
      const schema = schemaOf(m.payloadType as string);
      return multiEntryMaps(schema, fromBinary(schema, unhex(m.payloadHex ?? "")));
    });
    const expected =
      session.session === "new-runtime--new-plugin"
        ? ["ValidateContainerAdjustmentRequest.owners.owners.compound{1,6}"]
        : [];
    expect(maps).toEqual(expected);
  });

  describe.each(session.messages.map((m) => [m.order, m.typeName ?? m.type, m] as const))(
    "envelope #%i (%s)",
    (_order, _type, m) => {
      const body = unhex(m.bodyHex);

      it("the ttrpc header agrees with the body", () => {
        const h = unhex(m.headerHex);
        const view = new DataView(h.buffer, h.byteOffset, h.byteLength);
        expect(h.length).toBe(10);
        expect(view.getUint32(0)).toBe(body.length);
        expect(view.getUint32(0)).toBe(m.length);
        expect(view.getUint32(4)).toBe(m.streamId);
        expect(h[8]).toBe(m.type);
        expect(h[9]).toBe(m.flags);
      });

      if (m.type === 1) {
        it("decodes as ttrpc.Request with the recorded service, method, timeout and payload", () => {
          const req = fromBinary(RequestSchema, body);
          expect(req.$unknown).toBeUndefined();
          expect(req.service).toBe(m.service);
          expect(req.method).toBe(m.method);
          // No recorded timeout means the field is absent on the wire, i.e. 0: no deadline.
          expect(req.timeoutNano).toBe(BigInt(m.timeoutNano ?? 0));
          expect(hex(req.payload)).toBe(m.payloadHex ?? "");
          expect(req.metadata).toEqual([]);
          expect(hex(toBinary(RequestSchema, req))).toBe(m.bodyHex);
        });
      } else {
        it("decodes as ttrpc.Response with the recorded status and payload", () => {
          expect(m.type).toBe(2);
          const res = fromBinary(ResponseSchema, body);
          expect(res.$unknown).toBeUndefined();
          if (m.status === undefined) {
            // Success: no status field at all, not a status with code 0.
            expect(res.status).toBeUndefined();
          } else {
            expect(res.status?.code).toBe(m.status.code);
            expect(res.status?.message).toBe(m.status.message);
            expect(res.status?.details).toEqual([]);
          }
          expect(hex(res.payload)).toBe(m.payloadHex ?? "");
          expect(hex(toBinary(ResponseSchema, res))).toBe(m.bodyHex);
        });
      }
    },
  );
});

it("every request carries a timeout except the plugin's unsolicited UpdateContainers", () => {
  for (const s of sessions) {
    const without = s.messages.filter((m) => m.type === 1 && m.timeoutNano === undefined);
    expect(without.map((m) => `${m.service}.${m.method}`)).toEqual(["nri.pkg.api.v1alpha1.Runtime.UpdateContainers"]);
    const body = fromBinary(RequestSchema, unhex(without[0]?.bodyHex ?? ""));
    expect(body.timeoutNano).toBe(0n);
    expect(body.metadata).toEqual([]);
  }
});

it("the legacy plugin's only error is UNIMPLEMENTED \"method RunPodSandbox\"", () => {
  const legacy = sessions.find((s) => s.session === "new-runtime--legacy-plugin");
  const errors = legacy?.messages.filter((m) => m.status !== undefined).map((m) => [m.method, m.status]);
  expect(errors).toEqual([["RunPodSandbox", { code: 12, message: "method RunPodSandbox" }]]);
});

it("the recorded JSON is Go protojson: what other toJson options would produce does not match", () => {
  // Pins down why the defaults are the right options, on one rich recorded payload.
  const m = sessions
    .flatMap((s) => s.messages)
    .find((x) => x.payloadType === "nri.pkg.api.v1alpha1.SynchronizeRequest");
  if (m === undefined) throw new Error("test: no SynchronizeRequest recorded");
  const schema = schemaOf(m.payloadType as string);
  const decoded = fromBinary(schema, unhex(m.payloadHex ?? ""));
  expect(toJson(schema, decoded)).toStrictEqual(m.payload);
  expect(toJson(schema, decoded, { enumAsInteger: true })).not.toStrictEqual(m.payload);
  expect(toJson(schema, decoded, { useProtoFieldName: true })).not.toStrictEqual(m.payload);
  expect(toJson(schema, decoded, { alwaysEmitImplicit: true })).not.toStrictEqual(m.payload);
  const json = JSON.stringify(m.payload);
  expect(json).toContain('"state":"CONTAINER_RUNNING"');
  expect(json).toContain('"createdAt":"1700000000000000000"');
  expect(json).toContain('"runtimeHandler":"runc"');
});
