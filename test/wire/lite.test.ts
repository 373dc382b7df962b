import { describe, expect, it } from "vitest";
import * as lite from "../../gen/v1beta1/api_lite.js";
import * as alphaLite from "../../gen/v1alpha1/api_lite.js";
import * as root from "../../src/index.js";
import * as plugin from "../../src/plugin/index.js";
import * as beta from "../../src/v1beta1.js";
import * as alpha from "../../src/v1alpha1.js";

/*
 * The lite modules hold what a program that decodes no descriptor takes from protoc-gen-es's
 * modules: types, enums and service method tables, and no schema. The package entries export one
 * object per enum, whichever entry a program imports it from.
 */

/** The names of the enums protoc-gen-es generated: each has a schema named `<name>Schema` of kind enum. */
function enumNames(module: Record<string, unknown>): string[] {
  return Object.entries(module)
    .filter(([, v]) => (v as { kind?: unknown } | null)?.kind === "enum")
    .map(([k]) => k.replace(/Schema$/u, ""))
    .sort();
}

describe("lite modules", () => {
  it("export no schema, only enums and service tables as values", () => {
    expect(Object.keys(lite).filter((k) => k.endsWith("Schema") || k.startsWith("file_"))).toEqual([]);
    expect(Object.keys(lite).sort()).toEqual([...enumNames(beta), "services_v1beta1_api"].sort());
  });

  it("every enum of an entry is the lite object, with protoc-gen-es's names and numbers", () => {
    expect(enumNames(beta)).toContain("Event");
    for (const [entry, pb, l] of [
      [beta, beta.file_v1beta1_api, lite],
      [alpha, alpha.file_v1alpha1_api, alphaLite],
    ] as const) {
      for (const name of enumNames(entry)) {
        const value = (entry as Record<string, unknown>)[name];
        expect(value, name).toBe((l as Record<string, unknown>)[name]);
        const schema = (entry as unknown as Record<string, { values: { localName: string; number: number }[] }>)[`${name}Schema`]!;
        const want: Record<string, unknown> = {};
        for (const v of schema.values) want[v.localName] = v.number;
        for (const v of schema.values) want[String(v.number)] = v.localName;
        expect({ ...(value as object) }, `${pb.name} ${name}`).toStrictEqual(want);
      }
    }
  });

  it("nri-wire, nri-wire/plugin and nri-wire/v1beta1 export the same Event", () => {
    expect(root.Event).toBe(beta.Event);
    expect(plugin.Event).toBe(beta.Event);
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
