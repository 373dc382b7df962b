import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConformanceReport } from "../../src/testing/conformance.js";
import { runPeer, socketDir, tsCommand } from "../interop/support.js";
import { nriPeer, useGoPeers } from "../support/go-peers.js";
import { SLOW_START } from "../support/slow-start.js";

/**
 * `nri-wire test-plugin` as CI runs it, on every plugin the project ships (the example plugin in
 * each dialect, launched with its connection on fd 3) and on the Go stub plugin peers built on
 * containerd/nri v0.12.5 and v0.11.0 (started against a socket the runner listens on).
 */

const cli = tsCommand("src/cli/main.ts");
/** The nri-wire command itself, as a command line. */
const nriWire = [cli[0], ...cli[1]];

/** The nine events a StateChange-era plugin takes only as StateChange, in the order the suite sends them. */
const OLD_EVENTS = [
  "RunPodSandbox",
  "PostCreateContainer",
  "StartContainer",
  "PostStartContainer",
  "PostUpdateContainer",
  "PostUpdatePodSandbox",
  "RemoveContainer",
  "StopPodSandbox",
  "RemovePodSandbox",
];

function expectPassed(report: ConformanceReport, deprecated: Record<string, string[]>): void {
  expect(report.dialects.map((f) => f.dialect)).toEqual(["v1beta1", "v1alpha1", "statechange"]);
  for (const f of report.dialects) {
    const failed = f.checks.filter((c) => c.status === "fail");
    expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
    expect(f.checks.filter((c) => c.status === "skip").map((c) => c.id)).toEqual(expect.arrayContaining(["unsolicited"]));
    expect([f.dialect, f.deprecations.map((d) => `${d.plugin} ${d.detail}`)]).toEqual([f.dialect, deprecated[f.dialect] ?? []]);
  }
  expect(report.passed).toBe(true);
}

// One dialect at a time, each with the slow-start timeouts.
describe("nri-wire test-plugin on the example plugin", () => {
  it.each(["v1beta1", "v1alpha1", "statechange"] as const)("passes the %s dialect in every dialect, launched on fd 3", async (dialect) => {
    const junit = join(socketDir(), "junit.xml");
    const r = await runPeer(cli, ["test-plugin", "--json", "--junit", junit, ...SLOW_START, "--name", "example", "--idx", "42", "--", ...nriWire, "example-plugin", "--dialect", dialect]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.lines.join("\n")) as ConformanceReport;
    const old = OLD_EVENTS.map((e) => `42-example does not implement a dedicated ${e} RPC call`);
    expectPassed(report, dialect === "statechange" ? { v1beta1: old, v1alpha1: old } : {});
    expect(report.dialects.map((f) => f.registration)).toEqual(
      report.dialects.map((f) => ({ name: "example", idx: "42", version: f.dialect === "v1beta1" && dialect === "v1beta1" ? "v1beta1" : "v1alpha1" })),
    );
    const xml = readFileSync(junit, "utf8");
    expect(xml.match(/<testsuite /gu)).toHaveLength(3);
    expect(xml).not.toContain("<failure");
  }, 300_000);
});

describe("nri-wire test-plugin on the Go stub plugin", () => {
  const { hasGo, bin: peers } = useGoPeers({ "v0.12.5": nriPeer("nri-peer-tp", "v0.12.5"), "v0.11.0": nriPeer("nri-peer-tp", "v0.11.0") });

  it.skipIf(!hasGo).each(["v0.12.5", "v0.11.0"] as const)("passes the %s build in every dialect, started against --socket", async (version) => {
    const socket = join(socketDir(), "plugin.sock");
    const r = await runPeer(cli, ["test-plugin", "--json", ...SLOW_START, "--socket", socket, "--name", "peer-plugin", "--idx", "10", "--", peers[version], "plugin", "--socket", socket]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.lines.join("\n")) as ConformanceReport;
    const old = OLD_EVENTS.map((e) => `10-peer-plugin does not implement a dedicated ${e} RPC call`);
    expectPassed(report, version === "v0.11.0" ? { v1beta1: old, v1alpha1: old } : {});
  }, 300_000);

  it("exits 1 and prints the failing check when the plugin cannot register, and refuses a bad dialect", async () => {
    const r = await runPeer(cli, ["test-plugin", "--dialect", "v1beta1", "--registration-timeout", "300", "--", cli[0], "-e", "setTimeout(() => {}, 5000)"]);
    expect(r.code).toBe(1);
    expect(r.lines).toContain("  FAIL  registration    registers within the registration timeout with a valid name and index");
    expect(r.lines.at(-1)).toBe("1 failed: v1beta1/registration");
    const bad = await runPeer(cli, ["test-plugin", "--dialect", "v2", "--", "true"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe('nri-wire test-plugin: unknown dialect "v2": use v1beta1, v1alpha1, statechange');
  }, 60_000);
});

/** The example plugins: every file of examples/ that makes an NriPlugin, but those below. */
const NOT_ALONE: Record<string, string> = {
  "several-plugins": "three of the other examples in one process, three connections: each is run on its own",
};
const EXAMPLES = readdirSync(join(import.meta.dirname, "../../examples"))
  .filter((f) => f.endsWith(".ts") && readFileSync(join(import.meta.dirname, "../../examples", f), "utf8").includes("new NriPlugin("))
  .map((f) => f.slice(0, -3));
/** The scenario each example needs for its own paths to run (examples/scenarios/NAME.json). */
const SCENARIOS = new Set(readdirSync(join(import.meta.dirname, "../../examples/scenarios")).map((f) => f.replace(/\.json$/u, "")));
/** What each example is expected to answer (examples/expectations/NAME.json): every example has one. */
const EXPECTATIONS = new Set(readdirSync(join(import.meta.dirname, "../../examples/expectations")).map((f) => f.replace(/\.json$/u, "")));

describe("nri-wire test-plugin on every example plugin", () => {
  it("knows every example: each is run below or said why not", () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(5);
    for (const s of SCENARIOS) expect(EXAMPLES).toContain(s);
    expect([...EXPECTATIONS].sort()).toEqual(EXAMPLES.filter((e) => NOT_ALONE[e] === undefined).sort());
  });

  it.each(EXAMPLES.filter((e) => NOT_ALONE[e] === undefined))("%s passes in every dialect, launched on fd 3, answering as its expectations say", async (name) => {
    const plugin = tsCommand(`examples/${name}.ts`);
    const scenario = SCENARIOS.has(name) ? ["--scenario", join(import.meta.dirname, `../../examples/scenarios/${name}.json`)] : [];
    const expected = ["--expect", join(import.meta.dirname, `../../examples/expectations/${name}.json`)];
    const r = await runPeer(cli, ["test-plugin", "--json", ...SLOW_START, ...scenario, ...expected, "--name", name, "--idx", "42", "--", plugin[0], ...plugin[1]]);
    const report = JSON.parse(r.lines.join("\n")) as ConformanceReport;
    const failed = report.dialects.flatMap((d) => d.checks.filter((c) => c.status === "fail").map((c) => [d.dialect, c.id, c.failures.map((f) => f.message), d.stderr]));
    expect(failed).toEqual([]);
    expect(report.dialects.map((d) => [d.dialect, d.checks.find((c) => c.id === "answers")!.status])).toEqual(report.dialects.map((d) => [d.dialect, "pass"]));
    expect(r.code).toBe(0);
  }, 300_000);

  it("runs an example's annotation-driven path from the scenario: a refused ulimit fails CreateContainer with the plugin's text", async () => {
    const file = join(socketDir(), "soft-above-hard.json");
    const ulimits = JSON.stringify([{ type: "nofile", hard: 1024, soft: 2048 }]);
    writeFileSync(file, JSON.stringify({ pod: { annotations: { "ulimits.nri-wire.dev/container.app": ulimits } }, container: { name: "app" } }));
    const plugin = tsCommand("examples/ulimit-adjuster.ts");
    const r = await runPeer(cli, ["test-plugin", "--json", "--dialect", "v1beta1", ...SLOW_START, "--scenario", file, "--", plugin[0], ...plugin[1]]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.lines.join("\n")) as ConformanceReport;
    expect(report.dialects[0]!.checks.filter((c) => c.status === "fail").map((c) => [c.id, c.failures.map((f) => f.message)])).toEqual([
      ["events", ["CreateContainer (sent as nri.pkg.api.v1beta1.Plugin/CreateContainer) failed: unknown: ulimit-adjuster: nofile: soft limit 2048 above hard limit 1024"]],
    ]);
  }, 300_000);
});

describe("nri-wire test-plugin on a plugin that dies", () => {
  it("fails a plugin that exits right after answering CreateContainer, and prints its stderr", async () => {
    const plugin = tsCommand("test/testing/fixtures/exits-after-create.ts");
    const r = await runPeer(cli, ["test-plugin", "--dialect", "v1beta1", ...SLOW_START, "--", plugin[0], ...plugin[1]]);
    expect(r.code).toBe(1);
    const table = r.lines.join("\n");
    expect(table).toContain("  FAIL  alive           stays running and connected from registration to Shutdown\n                        plugin exited with code 3\n");
    expect(table).toContain("  the plugin's stderr ended with:\n    exits-after-create: leaving after answering CreateContainer\n");
    expect(r.lines.at(-1)).toBe("1 failed: v1beta1/alive");
  }, 300_000);
});

describe("nri-wire test-plugin --socket with a command: an external plugin", () => {
  it.each([
    ["a built executable's launcher, which reconnects", "test/testing/fixtures/reconnecting.ts", "reconnecting", "10"],
    ["a plugin that exits when its connection closes, started again", "examples/logger.ts", "logger", "00"],
  ])("passes the restart check: %s", async (_, script, name, idx) => {
    const socket = join(socketDir(), "p.sock");
    const plugin = tsCommand(script);
    const r = await runPeer(cli, ["test-plugin", "--json", "--dialect", "v1beta1", ...SLOW_START, "--socket", socket, "--name", name, "--idx", idx, "--", plugin[0], ...plugin[1], "--socket", socket]);
    const report = JSON.parse(r.lines.join("\n")) as ConformanceReport;
    const d = report.dialects[0]!;
    expect(d.checks.filter((c) => c.status === "fail").map((c) => [c.id, c.failures.map((f) => f.message), d.stderr])).toEqual([]);
    expect(d.checks.find((c) => c.id === "restart")!.status).toBe("pass");
    expect(r.code).toBe(0);
  }, 300_000);
});

describe("nri-wire test-plugin --scenario", () => {
  it("refuses a file it cannot read or that is not a scenario, naming the file and what is wrong", async () => {
    const missing = join(socketDir(), "missing.json");
    const bad = join(socketDir(), "bad.json");
    writeFileSync(bad, JSON.stringify({ pods: [] }));
    const notJson = join(socketDir(), "not.json");
    writeFileSync(notJson, "pod:");
    const texts: string[] = [];
    for (const f of [missing, bad, notJson]) {
      const r = await runPeer(cli, ["test-plugin", "--scenario", f, "--", "true"]);
      expect(r.code).toBe(2);
      texts.push(r.stderr.split("\n")[0]!);
    }
    expect(texts).toEqual([
      `nri-wire test-plugin: --scenario ${missing}: no such file`,
      `nri-wire test-plugin: --scenario ${bad}: scenario: unknown key "pods": use pod, container, existing, others`,
      `nri-wire test-plugin: --scenario ${notJson}: not JSON: Unexpected token 'p', "pod:" is not valid JSON`,
    ]);
  }, 60_000);

  it("refuses an expectations file it cannot read or that is not one, and a scenario's bad other plugin", async () => {
    const unknown = join(socketDir(), "unknown.json");
    writeFileSync(unknown, JSON.stringify({ CreateContainer: { answer: {}, mtach: "subset" } }));
    const other = join(socketDir(), "other.json");
    writeFileSync(other, JSON.stringify({ others: [{ name: "dev", idx: "1" }] }));
    const texts: string[] = [];
    for (const args of [["--expect", join(socketDir(), "missing.json")], ["--expect", unknown], ["--scenario", other]]) {
      const r = await runPeer(cli, ["test-plugin", ...args, "--", "true"]);
      expect(r.code).toBe(2);
      texts.push(r.stderr.split("\n")[0]!);
    }
    expect(texts).toEqual([
      expect.stringMatching(/^nri-wire test-plugin: --expect .*missing\.json: no such file$/u),
      `nri-wire test-plugin: --expect ${unknown}: expectations: CreateContainer: unknown key "mtach": use answer, match, refusal`,
      `nri-wire test-plugin: --scenario ${other}: scenario: others[0]: nri: invalid plugin index "1", must be 2 digits`,
    ]);
  }, 60_000);
});
