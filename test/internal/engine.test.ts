import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { COMMANDS } from "../../src/cli/commands.js";
import { SUPPORTED_ENGINES, checkEngine, currentEngine } from "../../src/internal/engine.js";
import { NriPlugin } from "../../src/plugin/index.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { socketPath } from "../support/socket.js";

const node = (version: string) => ({ name: "node", version }) as const;
const bun = (version: string) => ({ name: "bun", version }) as const;
const deno = (version: string) => ({ name: "deno", version }) as const;

/** Runs `f` with process.versions as an engine of `extra` reports it (Bun and Deno add their own key). */
async function asEngine<T>(extra: Record<string, string>, f: () => Promise<T>): Promise<T> {
  const real = Object.getOwnPropertyDescriptor(process, "versions")!;
  Object.defineProperty(process, "versions", { ...real, value: { ...process.versions, ...extra } });
  try {
    return await f();
  } finally {
    Object.defineProperty(process, "versions", real);
  }
}

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

describe("the engine", () => {
  it("is told by process.versions: Bun and Deno name themselves beside the Node version they emulate", () => {
    expect(currentEngine({ ...process.versions, node: "26.1.0" })).toEqual(node("26.1.0"));
    expect(currentEngine({ ...process.versions, node: "24.3.0", bun: "1.4.5" })).toEqual(bun("1.4.5"));
    expect(currentEngine({ ...process.versions, node: "24.2.0", deno: "2.9.6" })).toEqual(deno("2.9.6"));
    expect(currentEngine()).toEqual(node(process.versions.node));
  });

  it("is accepted from the oldest version of each engine on", () => {
    for (const e of [node("22.12.0"), node("22.20.1"), node("24.0.0"), node("26.12.1"), node("27.0.0"), bun("1.4.0"), bun("1.10.2"), bun("2.0.0"), deno("2.9.0"), deno("2.10.0"), deno("3.0.0")]) {
      expect(() => checkEngine(e), `${e.name} ${e.version}`).not.toThrow();
    }
  });

  it("is refused when older, in one line naming it and what nri-wire runs on", () => {
    expect(SUPPORTED_ENGINES).toBe("Node 22.12 or later, Bun 1.4 or later, Deno 2.9 or later");
    const refusal = (label: string) => `nri: ${label} is not supported: nri-wire runs on Node 22.12 or later, Bun 1.4 or later, Deno 2.9 or later`;
    expect(() => checkEngine(node("20.20.2"))).toThrow(refusal("Node 20.20.2"));
    expect(() => checkEngine(node("22.11.0"))).toThrow(refusal("Node 22.11.0"));
    expect(() => checkEngine(bun("1.3.9"))).toThrow(refusal("Bun 1.3.9"));
    expect(() => checkEngine(bun("0.8.1"))).toThrow(refusal("Bun 0.8.1"));
    expect(() => checkEngine(deno("2.8.4"))).toThrow(refusal("Deno 2.8.4"));
    expect(() => checkEngine(deno("1.46.3"))).toThrow(refusal("Deno 1.46.3"));
    // A version that does not read as major.minor is not taken for a new one.
    expect(() => checkEngine(bun("canary"))).toThrow(refusal("Bun canary"));
  });

  it("is checked when a plugin starts: start() rejects, closed settles with the same error, nothing connects", async () => {
    const p = new NriPlugin({ createContainer: () => undefined }, { socketPath: "/nonexistent/nri.sock", name: "p", idx: "10", env: {} });
    const text = "nri: Bun 1.3.9 is not supported: nri-wire runs on Node 22.12 or later, Bun 1.4 or later, Deno 2.9 or later";
    await expect(asEngine({ bun: "1.3.9" }, () => p.start())).rejects.toThrow(text);
    expect((await p.closed).message).toBe(text);
  });

  it("is checked when a runtime starts: start() rejects and the runtime can start on a supported engine", async () => {
    const path = socketPath();
    const rt = new NriRuntime({ socketPath: path, pluginPath: `${path}.none`, name: "rt", version: "1", warmUp: false });
    await expect(asEngine({ deno: "2.8.4" }, () => rt.start())).rejects.toThrow(
      "nri: Deno 2.8.4 is not supported: nri-wire runs on Node 22.12 or later, Bun 1.4 or later, Deno 2.9 or later",
    );
    await rt.start();
    cleanup.push(() => rt.stop());
    expect(rt.plugins).toEqual([]);
  });

  it("is checked by every command of the CLI: one line, exit code 1", async () => {
    const err: string[] = [];
    const code = await asEngine({ node: "20.20.2" }, () => main(["decode", "/nonexistent/x.index.json"], COMMANDS, () => undefined, (l) => err.push(l)));
    expect(code).toBe(1);
    expect(err).toEqual(["nri: Node 20.20.2 is not supported: nri-wire runs on Node 22.12 or later, Bun 1.4 or later, Deno 2.9 or later"]);
  });
});
