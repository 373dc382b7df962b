import { describe, expect, it } from "vitest";
import { importGraph } from "../support/import-graph.js";

/*
 * What importing nri-wire/runtime loads (type-only imports do not count). The runtime side
 * speaks both revisions, so it holds both revisions' generated codecs and the translation, but
 * it calls and serves the services from the generated method tables: no protoc-gen-es module
 * (each decodes its file's descriptor and fills @bufbuild/protobuf's registry, most of what the
 * runtime's heap held at import) and no @bufbuild/protobuf at all.
 */

describe("importing nri-wire/runtime", () => {
  const { files, packages } = importGraph("src/runtime/index.ts");

  it("reaches the runtime, ttrpc, the mux, the translation and both revisions' generated codecs (the walk sees the graph)", () => {
    for (const f of [
      "src/runtime/nri-runtime.ts",
      "src/runtime/runtime-connection.ts",
      "src/runtime/backends.ts",
      "src/api/services.ts",
      "src/ttrpc/server.ts",
      "src/mux/mux.ts",
      "src/translate/index.ts",
      "gen/v1alpha1/api_codec.ts",
      "gen/v1beta1/api_codec.ts",
      "gen/v1beta1/api_lite.ts",
    ]) {
      expect(files).toContain(f);
    }
  });

  it("decodes no descriptor and loads no package: no protoc-gen-es module, no @bufbuild/protobuf", () => {
    expect([...files].filter((f) => f.endsWith("_pb.ts"))).toEqual([]);
    expect([...packages]).toEqual([]);
    expect(files).not.toContain("src/wire/reflection.ts");
  });

  it("holds nothing of the plugin side or the testing library", () => {
    expect([...files].filter((f) => f.startsWith("src/plugin/") || f.startsWith("src/testing/"))).toEqual([]);
  });
});
