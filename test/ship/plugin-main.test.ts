import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { pluginMain } from "../../src/ship/plugin-main.js";
import { tempDir } from "../support/temp.js";

const dir = tempDir("nriw-plugin-main-");
afterEach(() => vi.restoreAllMocks());

/** Runs a mode of the executable in-process; its exit code and what it wrote. */
async function run(entry: Record<string, unknown>, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
  const code = await pluginMain(() => Promise.resolve(entry), { name: "adjuster", idx: "10" }, argv, env);
  vi.restoreAllMocks();
  return { code, out, err };
}

const entry = { default: { createContainer: () => undefined } };

describe("the built executable's modes", () => {
  it("an entry that fails to load is reported with its stack, then one line naming it and the identity the runtime gives", async () => {
    const boom = new Error("configuration missing");
    let err = "";
    vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
    const code = await pluginMain(() => Promise.reject(boom), { name: "adjuster", idx: "10" }, ["check"], { NRI_PLUGIN_IDX: "20", NRI_PLUGIN_NAME: "renamed" });
    vi.restoreAllMocks();
    expect(code).toBe(1);
    expect(err).toBe(`${boom.stack}\n20-renamed: cannot load the entry: configuration missing\n`);
  });

  it("check prints the plugin's events and handlers", async () => {
    expect(await run(entry, ["check"])).toEqual({ code: 0, out: '{"id":"10-adjuster","events":"CreateContainer","handlers":["createContainer"]}\n', err: "" });
    expect(await run({}, ["check"])).toEqual({
      code: 1,
      out: "",
      err: "10-adjuster: exports no plugin: its default export must be an object of plugin handlers (such as createContainer)\n",
    });
  });

  it("refuses to start with one line when the socket is missing or is not one, naming the identity it was given", async () => {
    const missing = join(dir, "nri.sock");
    expect(await run(entry, ["--socket", missing, "--idx", "20"])).toEqual({
      code: 1,
      out: "",
      err: `20-adjuster: cannot start: socket ${missing}: missing (is NRI enabled in the runtime, and its socket directory mounted?)\n`,
    });
    const file = join(dir, "file");
    writeFileSync(file, "");
    expect((await run(entry, ["--socket", file])).err).toBe(`10-adjuster: cannot start: socket ${file}: not a socket\n`);
  });

  it("probe says why the plugin is not ready", async () => {
    expect(await run(entry, ["probe", "--state", dir])).toEqual({ code: 1, out: "", err: `10-adjuster: not registered: no state file ${join(dir, "registered")}\n` });
  });

  it("probe does not load the entry, and says what is wrong with its command line", async () => {
    let loads = 0;
    let err = "";
    vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
    const load = () => (loads++, Promise.reject(new Error("the entry's top-level code ran")));
    const codes = [
      await pluginMain(load, { name: "adjuster", idx: "10" }, ["probe", "--state", dir], { NRI_PLUGIN_IDX: "20" }),
      await pluginMain(load, { name: "adjuster", idx: "10" }, ["probe", "--stat", dir], {}),
    ];
    vi.restoreAllMocks();
    expect([codes, loads]).toEqual([[1, 1], 0]);
    const lines = err.split("\n");
    expect([lines[0], lines.length]).toEqual([`20-adjuster: not registered: no state file ${join(dir, "registered")}`, 3]);
    expect(lines[1]).toMatch(/^10-adjuster: bad command line: Unknown option '--stat'/);
  });

  it("a bad command line is one line", async () => {
    const r = await run(entry, ["--sockt", "x"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^10-adjuster: bad command line: Unknown option '--sockt'/);
  });
});
