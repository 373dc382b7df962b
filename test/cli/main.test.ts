import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type Command, EXIT } from "../../src/cli/command.js";
import { UsageError } from "../../src/cli/errors.js";
import { main } from "../../src/cli/main.js";
import pkg from "../../package.json" with { type: "json" };

/** Runs main in-process, capturing what it prints. */
async function cli(argv: string[], commands?: readonly Command[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, commands, (s) => (out += `${s}\n`), (s) => (err += `${s}\n`));
  return { code, out, err };
}

describe("nri-wire command line", () => {
  it("--help lists every command and the exit codes; no arguments prints it as a usage error", async () => {
    const h = await cli(["--help"]);
    expect(h.code).toBe(EXIT.ok);
    expect(h.out).toContain("  example-plugin   Run the example plugin");
    expect(h.out).toContain("  example-runtime  Run the example runtime");
    expect(h.out).toContain("exit codes:\n  0  success\n  1  the command ran and failed\n  2  usage error: unknown command or option, missing or bad value\n");
    const none = await cli([]);
    expect([none.code, none.err]).toEqual([EXIT.usage, h.out]);
  });

  it("<command> --help and help <command> print the command's usage and options", async () => {
    const h = await cli(["example-runtime", "--help"]);
    expect(h.code).toBe(EXIT.ok);
    expect(h.out.split("\n").slice(0, 1)).toEqual(["usage: nri-wire example-runtime --socket PATH [--plugins N]"]);
    expect(h.out).toContain("  --plugins N    how many plugins to wait for (default 1)\n");
    expect((await cli(["help", "example-runtime"])).out).toBe(h.out);
  });

  it("--version prints the package version", async () => {
    expect(await cli(["--version"])).toEqual({ code: EXIT.ok, out: `nri-wire ${pkg.version}\n`, err: "" });
  });

  it("an unknown command, an unknown option or a bad value is a usage error (exit 2) naming it", async () => {
    expect(await cli(["decod"])).toEqual({ code: EXIT.usage, out: "", err: 'nri-wire: unknown command "decod"; commands: example-plugin, example-runtime, decode, view, record, test-plugin, build (nri-wire --help)\n' });
    const opt = await cli(["example-runtime", "--sockt", "x"]);
    expect(opt.code).toBe(EXIT.usage);
    expect(opt.err).toMatch(/^nri-wire example-runtime: Unknown option '--sockt'/u);
    expect(await cli(["example-runtime", "--socket", "/x", "--plugins", "0"])).toEqual({
      code: EXIT.usage,
      out: "",
      err: "nri-wire example-runtime: --plugins 0 is not a positive integer\nusage: nri-wire example-runtime --socket PATH [--plugins N]\n",
    });
  });

  it("a command is one table entry: its options are parsed, its failure is exit 1 with its message", async () => {
    const seen: unknown[] = [];
    const hello: Command = {
      name: "hello",
      summary: "say hello",
      options: { to: { type: "string", value: "NAME", description: "whom" }, loud: { type: "boolean", description: "shout" } },
      positionals: "[WORDS...]",
      async run(v, p) {
        seen.push(v, p);
        if (v.to === "nobody") throw new Error("hello: nobody to greet");
        if (v.to === "") throw new UsageError("hello: --to is empty");
        return EXIT.ok;
      },
    };
    expect((await cli(["hello", "--to", "you", "--loud", "a", "b"], [hello])).code).toBe(EXIT.ok);
    expect(seen).toEqual([{ to: "you", loud: true }, ["a", "b"]]);
    expect(await cli(["hello", "--to", "nobody"], [hello])).toEqual({ code: EXIT.failed, out: "", err: "hello: nobody to greet\n" });
    expect((await cli(["hello", "--to", ""], [hello])).code).toBe(EXIT.usage);
    expect((await cli(["--help"], [hello])).out).toContain("  hello  say hello\n");
  });

  it("an option whose value is a list of flags takes the next argument even when it starts with a dash; others still refuse it", async () => {
    const seen: unknown[] = [];
    const flags: Command = {
      name: "flags",
      summary: "takes flags",
      options: { "node-options": { type: "string", value: "FLAGS", flagsValue: true, description: "flags" }, out: { type: "string", value: "DIR", description: "where" } },
      positionals: "[WORDS...]",
      async run(v, p) {
        seen.push(v, p);
        return EXIT.ok;
      },
    };
    expect((await cli(["flags", "--node-options", "--max-semi-space-size=1 --single-threaded", "--out", "o", "a"], [flags])).code).toBe(EXIT.ok);
    expect((await cli(["flags", "--node-options=--jitless", "--", "--node-options", "-x"], [flags])).code).toBe(EXIT.ok);
    expect(seen).toEqual([{ "node-options": "--max-semi-space-size=1 --single-threaded", out: "o" }, ["a"], { "node-options": "--jitless" }, ["--node-options", "-x"]]);
    const refused = await cli(["flags", "--out", "--x"], [flags]);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.err).toMatch(/^nri-wire flags: Option '--out' argument is ambiguous/u);
  });

  it("the program itself exits with those codes", () => {
    const run = (args: string[]) => spawnSync(process.execPath, ["--import", "tsx", resolve(import.meta.dirname, "../../src/cli/main.ts"), ...args], { encoding: "utf8" });
    expect(run(["--help"]).status).toBe(0);
    expect(run(["nope"]).status).toBe(2);
    const failed = run(["example-plugin", "--socket", "/nonexistent/nri.sock"]);
    expect([failed.status, failed.stderr]).toEqual([1, "nri: cannot connect to /nonexistent/nri.sock: connect ENOENT /nonexistent/nri.sock\n"]);
  }, 30_000);
});
