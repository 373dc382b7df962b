import { describe, expect, it } from "vitest";
import * as protobuf from "@bufbuild/protobuf";
import { clone as reflectiveClone, create as reflectiveCreate, toBinary as reflectiveToBinary } from "@bufbuild/protobuf";
import * as beta from "../../src/v1beta1.js";
import { WithStructSchema } from "../codegen/gen/kitchen/v1/kitchen_pb.js";
import { messageRegistry, reflection } from "../../src/wire/index.js";

/*
 * A registry serves the messages of its tables by their generated code and the others by the
 * reflective fallback it was given. The generated and the reflective path differ in one
 * observable way, which tells them apart: protobuf-es create() keeps a message of the schema given
 * as a field init as it is, and so does the generated create(); but only generated code exists
 * without the fallback.
 */

const init = { adjust: { annotations: { a: "1" }, env: [{ key: "K", value: "V" }] } };

describe("a registry of generated tables", () => {
  const generatedOnly = messageRegistry([beta.messages_v1beta1_api]);
  const withFallback = messageRegistry([beta.messages_v1beta1_api], reflection);

  it("makes, copies and codes what protobuf-es does, through the generated code of its tables", () => {
    const m = generatedOnly.create(beta.CreateContainerResponseSchema, init);
    expect(m).toStrictEqual(reflectiveCreate(beta.CreateContainerResponseSchema, init));
    expect(generatedOnly.create(beta.CreateContainerResponseSchema, m)).toBe(m);
    expect(generatedOnly.clone(beta.CreateContainerResponseSchema, m)).toStrictEqual(reflectiveClone(beta.CreateContainerResponseSchema, m));
    expect(generatedOnly.toBinary(beta.CreateContainerResponseSchema, m)).toStrictEqual(reflectiveToBinary(beta.CreateContainerResponseSchema, m));
    expect(generatedOnly.fromBinary(beta.CreateContainerResponseSchema, generatedOnly.encodeInit(beta.CreateContainerResponseSchema, init))).toStrictEqual(m);
    expect(generatedOnly.codecFor(beta.CreateContainerResponseSchema)).toBe(beta.messages_v1beta1_api.CreateContainerResponse);
    expect(generatedOnly.generated("nri.pkg.api.v1beta1.CreateContainerResponse")).toBe(beta.messages_v1beta1_api.CreateContainerResponse);
  });

  it("takes a message's generated code in a schema's place, as it is, with no descriptor", () => {
    const code = beta.messages_v1beta1_api.CreateContainerResponse;
    const m = generatedOnly.create(code, init);
    expect(m).toStrictEqual(reflectiveCreate(beta.CreateContainerResponseSchema, init));
    expect(generatedOnly.create(code, m)).toBe(m);
    expect(generatedOnly.clone(code, m)).toStrictEqual(m);
    expect(generatedOnly.toBinary(code, m)).toStrictEqual(reflectiveToBinary(beta.CreateContainerResponseSchema, m));
    expect(generatedOnly.fromBinary(code, generatedOnly.encodeInit(code, init))).toStrictEqual(m);
    expect(generatedOnly.codecFor(code)).toBe(code);
    // Generated code of a message no table holds is still used: the registry needs only its name then.
    const empty = messageRegistry([]);
    expect(empty.toBinary(code, m)).toStrictEqual(generatedOnly.toBinary(code, m));
    expect(empty.codecFor(code)).toBe(code);
  });

  it("without a reflective fallback, a message no table holds is an error naming it", () => {
    expect(generatedOnly.codecFor(WithStructSchema)).toBeUndefined();
    expect(() => generatedOnly.create(WithStructSchema, { name: "x" })).toThrow(
      new Error("wire: create kitchen.v1.WithStruct: no generated code, and the registry has no reflective fallback"),
    );
    expect(() => generatedOnly.fromBinary(WithStructSchema, new Uint8Array(0))).toThrow(
      new Error("wire: decode kitchen.v1.WithStruct: no generated code, and the registry has no reflective fallback"),
    );
  });

  it("with the fallback, such a message is made, copied and coded by protobuf-es", () => {
    const structInit = { fields: { a: 1 }, name: "x" };
    const m = withFallback.create(WithStructSchema, structInit);
    expect(m).toStrictEqual(reflectiveCreate(WithStructSchema, structInit));
    expect(withFallback.clone(WithStructSchema, m)).toStrictEqual(m);
    expect(withFallback.fromBinary(WithStructSchema, withFallback.toBinary(WithStructSchema, m))).toStrictEqual(m);
    expect(() => withFallback.fromBinary(WithStructSchema, new Uint8Array([0x12, 0x05]))).toThrow("decode kitchen.v1.WithStruct: premature EOF");
  });

  it("looks messages up by type name only in the tables it was built from", () => {
    expect(messageRegistry([]).generated("nri.pkg.api.v1beta1.CreateContainerResponse")).toBeUndefined();
  });
});

describe("the reflective fallback", () => {
  it("is the ES module build of @bufbuild/protobuf, the one protoc-gen-es modules import: one copy in a process", () => {
    expect(reflection.create).toBe(protobuf.create);
    expect(reflection.clone).toBe(protobuf.clone);
    expect(reflection.toBinary).toBe(protobuf.toBinary);
    expect(reflection.fromBinary).toBe(protobuf.fromBinary);
  });
});
