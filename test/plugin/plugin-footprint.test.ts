import { describe, expect, it } from "vitest";
import { importGraph } from "../support/import-graph.js";

/*
 * What importing nri-wire/plugin loads (type-only imports do not count, `import { type X }`
 * does). A plugin must not pay at import for what it does not use: no @bufbuild/protobuf (its
 * registry, JSON and descriptor decoding), no protoc-gen-es module (each decodes its file's descriptor), nothing of
 * v1alpha1 (translation is imported when a v1alpha1 runtime first calls), nothing of the runtime
 * side. Messages are made and coded by generated code alone: the plugin's registry has no
 * reflective fallback, so nothing could load the package later either.
 */

describe("importing nri-wire/plugin", () => {
  const { files, packages } = importGraph("src/plugin/index.ts");

  it("reaches the endpoint, ttrpc, the mux and the v1beta1 generated codecs (the walk sees the graph)", () => {
    for (const f of [
      "src/plugin/plugin.ts",
      "src/ttrpc/server.ts",
      "src/ttrpc/client.ts",
      "src/mux/mux.ts",
      "src/api/adjustment-builder.ts",
      "src/api/messages.ts",
      "src/wire/registry.ts",
      "gen/v1beta1/api_codec.ts",
      "gen/v1beta1/api_lite.ts",
    ]) {
      expect(files).toContain(f);
    }
  });

  it("loads no package, now or later: not even the reflective fallback of @bufbuild/protobuf", () => {
    expect([...packages]).toEqual([]);
    expect(files).not.toContain("src/wire/reflection.ts");
  });

  it("decodes no descriptor: no protoc-gen-es module of any file", () => {
    expect([...files].filter((f) => f.endsWith("_pb.ts"))).toEqual([]);
  });

  it("holds nothing of v1alpha1 and no translation, and nothing of the runtime side", () => {
    expect([...files].filter((f) => f.startsWith("gen/v1alpha1/"))).toEqual([]);
    expect([...files].filter((f) => f.startsWith("src/translate/"))).toEqual([]);
    expect([...files].filter((f) => f.startsWith("src/runtime/") || f.startsWith("src/testing/"))).toEqual([]);
  });

  it("the walk does see what a type-only import would hide: nri-wire/v1beta1 reaches protoc-gen-es and @bufbuild/protobuf", () => {
    const full = importGraph("src/v1beta1.ts");
    expect(full.files).toContain("gen/v1beta1/api_pb.ts");
    expect(full.packages).toContain("@bufbuild/protobuf/codegenv2");
    expect(importGraph("src/wire/reflection.ts").packages).toEqual(new Set(["@bufbuild/protobuf"]));
  });
});
