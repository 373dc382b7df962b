import { describe, expect, it } from "vitest";
import { create as reflectiveCreate, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import * as lite from "../../gen/v1beta1/api_lite.js";
import * as beta from "../../src/v1beta1.js";
import { WithStructSchema } from "../codegen/gen/kitchen/v1/kitchen_pb.js";
import { create } from "../../src/wire/create.js";
import { lazySchemas, realSchema } from "../../src/wire/lazy.js";

describe("lazy schemas", () => {
  it("answer kind and type name without loading their module; anything else loads it, and a failure names the file", () => {
    const lazy = lazySchemas("missing/x.proto", import.meta.url, "./no-such_pb.js");
    const schema = lazy<{ kind: string; typeName: string; fields: unknown }>("XSchema", "message", "missing.X");
    expect(schema.kind).toBe("message");
    expect(schema.typeName).toBe("missing.X");
    expect(() => schema.fields).toThrow(/^wire: loading the schemas of missing\/x\.proto from \.\/no-such_pb\.js: /u);
  });

  it("once the module is provided (importing nri-wire/v1beta1 does it), behave as the real schemas for protobuf-es", () => {
    expect(realSchema(lite.PodSandboxSchema)).toBe(beta.PodSandboxSchema);
    expect(realSchema(lite.Plugin)).toBe(beta.Plugin);
    expect(realSchema(lite.file_v1beta1_api)).toBe(beta.file_v1beta1_api);
    const init = { id: "p1", labels: { a: "b" }, linux: { cgroupParent: "/kubepods" }, ips: ["10.0.0.1"] };
    const m = reflectiveCreate(lite.PodSandboxSchema, init);
    expect(m).toStrictEqual(reflectiveCreate(beta.PodSandboxSchema, init));
    expect(toJson(lite.PodSandboxSchema, m)).toStrictEqual(toJson(beta.PodSandboxSchema, m));
    expect(fromBinary(lite.PodSandboxSchema, toBinary(lite.PodSandboxSchema, m))).toStrictEqual(m);
    expect(lite.Plugin.methods.map((x) => x.name)).toStrictEqual(beta.Plugin.methods.map((x) => x.name));
    expect(lite.EventSchema.values.length).toBe(beta.EventSchema.values.length);
  });

  it("enums are the same names and numbers both ways", () => {
    expect({ ...lite.Event }).toStrictEqual({ ...beta.Event });
    expect({ ...lite.ContainerState }).toStrictEqual({ ...beta.ContainerState });
  });

  it("service tables name every method with its input and output type", () => {
    const want = Object.fromEntries(
      beta.file_v1beta1_api.services.map((s) => [
        s.name,
        { typeName: s.typeName, methods: s.methods.map((m) => ({ name: m.name, localName: m.localName, kind: m.methodKind, input: m.input.typeName, output: m.output.typeName })) },
      ]),
    );
    expect(lite.services_v1beta1_api).toStrictEqual(want);
  });
});

describe("create() without descriptors", () => {
  it("makes what protobuf-es create() makes, through generated code for a lite schema and returns a message as it is", () => {
    const init = { adjust: { annotations: { a: "1" }, env: [{ key: "K", value: "V" }] } };
    const m = create(lite.CreateContainerResponseSchema, init);
    expect(m).toStrictEqual(reflectiveCreate(beta.CreateContainerResponseSchema, init));
    expect(create(lite.CreateContainerResponseSchema, m)).toBe(m);
  });

  it("falls back to protobuf-es for a message without generated code", () => {
    const init = { fields: { a: 1 }, name: "x" };
    expect(create(WithStructSchema, init)).toStrictEqual(reflectiveCreate(WithStructSchema, init));
  });
});
