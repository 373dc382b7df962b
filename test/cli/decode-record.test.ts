import { spawn } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { decodeCaptures } from "../../src/cli/decode.js";
import { main } from "../../src/cli/main.js";
import { decodeCapture, readCapture } from "../../src/capture/capture-file.js";
import type { SessionRecord } from "../../src/capture/session-decoder.js";
import { SCRIPT_EVENTS, viaStateChange } from "../support/lifecycle-events.js";
import { runPeer, socketDir, startPeer, tsCommand } from "../interop/support.js";
import { nriPeer, useGoPeers } from "../support/go-peers.js";
import { SLOW_START_GO_RUNTIME, SLOW_START_TEST_MS } from "../support/slow-start.js";
import { indexPath, loadGolden } from "../capture/capture-support.js";
import { tempDir } from "../support/temp.js";

const cli = tsCommand("src/cli/main.ts");

describe("nri-wire decode", () => {
  const session = "new-runtime--legacy-plugin";

  it("prints one JSON line per message, each the decoded record with its session, and exits 0", () => {
    const lines: string[] = [];
    expect(decodeCaptures([indexPath(session)], false, (l) => lines.push(l))).toBe(0);
    const want = decodeCapture(readCapture(indexPath(session))).map((r) => ({ session, ...r }));
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(JSON.parse(JSON.stringify(want)));
    expect(lines).toHaveLength(loadGolden(session).messages.length);
  });

  it("--pretty: a heading per message with side, conn, stream, call, era, status, then the payload", () => {
    const lines: string[] = [];
    decodeCaptures([indexPath(session)], true, (l) => lines.push(l));
    const heads = lines.map((l) => l.split("\n")[0]!);
    expect(heads[6]).toBe(`     2.928 ms  ${session}  runtime → plugin  @961  conn 1 stream 5  request   Plugin.RunPodSandbox  [v1alpha1 dedicated]  timeout 2000 ms`);
    expect(lines[7]).toBe(
      `     3.070 ms  ${session}  plugin → runtime  @138  conn 1 stream 5  response  Plugin.RunPodSandbox  [v1alpha1 dedicated]\n      status UNIMPLEMENTED (12): method RunPodSandbox`,
    );
    expect(heads[8]).toBe(`     3.155 ms  ${session}  runtime → plugin  @1323  conn 1 stream 7  request   Plugin.StateChange  (= RunPodSandbox)  [v1alpha1 statechange]  timeout 2000 ms`);
    expect(lines[3]).toBe(`     1.675 ms  ${session}  plugin → runtime  @97  conn 1 stream 1  response  Plugin.Configure  [v1alpha1 common]\n      nri.pkg.api.v1alpha1.ConfigureResponse {\n        "events": 2047\n      }`);
  });

  it("exits 1 on a damaged capture after printing everything it could decode, the damage marked with its offset", () => {
    const dir = tempDir();
    for (const ext of ["index.json", "p2r.bin"]) copyFileSync(indexPath(session).replace("index.json", ext), join(dir, `${session}.${ext}`));
    const r2p = new Uint8Array(readFileSync(indexPath(session).replace("index.json", "r2p.bin")));
    r2p[953] = 0x7f;
    writeFileSync(join(dir, `${session}.r2p.bin`), r2p);
    const lines: string[] = [];
    expect(decodeCaptures([join(dir, `${session}.index.json`)], false, (l) => lines.push(l))).toBe(1);
    const records = lines.map((l) => JSON.parse(l) as SessionRecord);
    expect(records.filter((r) => r.error !== undefined && r.type === undefined)).toEqual([
      expect.objectContaining({ dir: "r2p", offset: 953, error: "mux: invalid frame header at offset 953: conn id 2130706433 is not 1 or 2: skipped 362 bytes to the next frame at offset 1315" }),
    ]);
    expect(records.at(-1)).toMatchObject({ method: "StateChange", translatesTo: "RemovePodSandbox", type: "response" });
  });

  it("refuses to run without a capture (usage, exit 2), and names a missing file (exit 1)", async () => {
    const err: string[] = [];
    expect(await main(["decode"], COMMANDS, () => undefined, (l) => err.push(l))).toBe(2);
    expect(err).toEqual(["nri-wire decode: give at least one capture index file\nusage: nri-wire decode [--pretty] CAPTURE.index.json..."]);
    err.length = 0;
    expect(await main(["decode", "/nonexistent/x.index.json"], COMMANDS, () => undefined, (l) => err.push(l))).toBe(1);
    expect(err[0]).toMatch(/^capture: cannot read \/nonexistent\/x\.index\.json: ENOENT/u);
  });

  it("given a .bin file, says it expected the JSON capture index (exit 1)", async () => {
    const bin = indexPath("new-runtime--legacy-plugin").replace("index.json", "p2r.bin");
    const err: string[] = [];
    expect(await main(["decode", bin], COMMANDS, () => undefined, (l) => err.push(l))).toBe(1);
    expect(err).toEqual([`capture: ${bin} is not JSON: expected a capture index (NAME.index.json, written by nri-wire record beside NAME.p2r.bin and NAME.r2p.bin)`]);
  });
});

/**
 * Starts `nri-wire record` and resolves once it listens; its stdout lines are collected, whole
 * once `exited` (which waits for its output to end) resolves.
 */
async function startRecorder(args: string[]): Promise<{ lines: string[]; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(cli[0], [...cli[1], "record", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let err = "";
  createInterface({ input: child.stdout }).on("line", (l) => lines.push(l));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr }).on("line", (l) => {
      err += `${l}\n`;
      if (l.startsWith("record: listening on ")) resolve();
    });
    void exited.then(() => reject(new Error(`record exited early:\n${err}`)));
  });
  return { lines, stderr: () => err, exited };
}

describe("nri-wire record", () => {
  it("records our example runtime and plugin through the proxy; --decode prints what decode prints afterwards", async () => {
    const dir = socketDir();
    const upstream = join(dir, "rt.sock");
    const listen = join(dir, "cap.sock");
    const runtime = startPeer(cli, ["example-runtime", "--socket", upstream]);
    await runtime.waitFor((l) => l.includes('"ready":true'));
    const rec = await startRecorder(["--listen", listen, "--upstream", upstream, "--out", join(dir, "demo"), "--decode", "--once"]);
    const plugin = await runPeer(cli, ["example-plugin", "--socket", listen, "--dialect", "v1alpha1"]);
    expect(plugin.code, plugin.stderr).toBe(0);
    expect(await runtime.exited).toBe(0);
    expect(await rec.exited, rec.stderr()).toBe(0);
    expect(rec.stderr()).toMatch(/^record: demo: wrote .*\/demo\.index\.json \(\d+ bytes plugin → runtime, \d+ bytes runtime → plugin\)$/mu);
    const after: string[] = [];
    expect(decodeCaptures([join(dir, "demo.index.json")], false, (l) => after.push(l))).toBe(0);
    expect(rec.lines).toEqual(after);
    const calls = after.map((l) => JSON.parse(l) as SessionRecord).filter((r) => r.type === "request" && r.conn === 1);
    expect(calls.map((r) => [r.method, r.revision])).toContainEqual(["PostUpdatePodSandbox", "v1alpha1"]);
  }, 60_000);

  describe("with the Go peers", () => {
    const { hasGo, bin } = useGoPeers({ "v0.12.5": nriPeer("nri-peer-record", "v0.12.5"), "v0.11.0": nriPeer("nri-peer-record", "v0.11.0") });

    it.skipIf(!hasGo)("records the Go v0.12.5 runtime with the Go v0.11.0 plugin: the fallback to StateChange, decoded", async () => {
      const dir = socketDir();
      const upstream = join(dir, "rt.sock");
      const listen = join(dir, "cap.sock");
      const runtime = startPeer([bin["v0.12.5"], []], ["runtime", "--socket", upstream, ...SLOW_START_GO_RUNTIME]);
      await runtime.waitFor((l) => l.includes('"ready":true'));
      const rec = await startRecorder(["--listen", listen, "--upstream", upstream, "--out", join(dir, "go"), "--once"]);
      const plugin = await runPeer([bin["v0.11.0"], []], ["plugin", "--socket", listen]);
      expect(plugin.code, plugin.stderr).toBe(0);
      expect(await runtime.exited, runtime.stderr()).toBe(0);
      expect(await rec.exited, rec.stderr()).toBe(0);
      expect(rec.lines).toEqual([]);
      const records = decodeCapture(readCapture(join(dir, "go.index.json")));
      expect(records.filter((r) => r.error !== undefined)).toEqual([]);
      expect(records.every((r) => r.revision === "v1alpha1")).toBe(true);
      const refused = records.filter((r) => r.status !== undefined);
      expect(refused).toEqual([expect.objectContaining({ dir: "p2r", method: "RunPodSandbox", status: { code: 12, name: "unimplemented", message: "method RunPodSandbox" } })]);
      const stateChanges = records.filter((r) => r.method === "StateChange" && r.type === "request").map((r) => r.translatesTo);
      expect(stateChanges).toEqual(viaStateChange(SCRIPT_EVENTS));
      const register = records.find((r) => r.method === "RegisterPlugin" && r.type === "request")!;
      expect(register.payload).toMatchObject({ pluginName: "peer-plugin", pluginIdx: "10" });
    }, SLOW_START_TEST_MS);
  });
});
