import { describe, expect, it } from "vitest";
import { checkPluginIndex, checkPluginName, parsePluginId, resolveIdentity } from "../../src/api/identity.js";

describe("plugin identity", () => {
  it("validates index and name like the reference, with exact messages", () => {
    expect(() => checkPluginIndex("1")).toThrow('nri: invalid plugin index "1", must be 2 digits');
    expect(() => checkPluginIndex("1a")).toThrow('nri: invalid plugin index "1a" (not [0-9][0-9])');
    expect(() => checkPluginName("")).toThrow("nri: invalid plugin name: name is empty");
    expect(() => checkPluginName("a/b")).toThrow(`nri: invalid plugin name "a/b": contains invalid character '/'`);
    expect(() => parsePluginId("template")).toThrow('nri: invalid plugin name "template", idx-pluginname expected');
    expect(parsePluginId("10-my.plugin+x_y")).toEqual({ idx: "10", name: "my.plugin+x_y" });
  });

  it("takes options first, then NRI_PLUGIN_NAME/NRI_PLUGIN_IDX, then an NN-name executable", () => {
    expect(resolveIdentity({ name: "a", idx: "01", env: { NRI_PLUGIN_NAME: "b", NRI_PLUGIN_IDX: "02" } })).toEqual({ name: "a", idx: "01" });
    expect(resolveIdentity({ env: { NRI_PLUGIN_NAME: "b", NRI_PLUGIN_IDX: "02" }, executable: "/opt/nri/99-c" })).toEqual({ name: "b", idx: "02" });
    expect(resolveIdentity({ env: {}, executable: "/opt/nri/42-logger.js" })).toEqual({ name: "logger", idx: "42" });
    expect(resolveIdentity({ idx: "05", env: {}, executable: "/usr/bin/sidecar" })).toEqual({ name: "sidecar", idx: "05" });
    expect(() => resolveIdentity({ env: {}, executable: "/usr/bin/sidecar" })).toThrow(
      "nri: no plugin index: give idx, set NRI_PLUGIN_IDX, or name the executable NN-name",
    );
    expect(() => resolveIdentity({ name: "x", idx: "100", env: {} })).toThrow('nri: invalid plugin index "100", must be 2 digits');
  });
});
