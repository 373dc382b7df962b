import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ConformanceReport } from "../../src/testing/conformance.js";
import { runPeer, socketDir, tsCommand } from "../interop/support.js";
import { nriPeer, useGoPeers } from "../support/go-peers.js";

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

// One dialect at a time, with timeouts a plugin started through tsx meets on a busy machine (its
// start-up is what they measure here, not the protocol).
const SLOW_START = ["--registration-timeout", "20000", "--request-timeout", "5000", "--gone-timeout", "10000"];

describe("nri-wire test-plugin on the example plugin", () => {
  it.each(["v1beta1", "v1alpha1", "statechange"] as const)("passes the %s dialect in every dialect, launched on fd 3", async (dialect) => {
    const junit = join(socketDir(), "junit.xml");
    const r = await runPeer(cli, ["test-plugin", "--json", "--junit", junit, ...SLOW_START, "--name", "example", "--idx", "42", "--", ...nriWire, "example-plugin", "--dialect", dialect], 300_000);
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
    const r = await runPeer(cli, ["test-plugin", "--json", "--socket", socket, "--name", "peer-plugin", "--idx", "10", "--", peers[version], "plugin", "--socket", socket], 300_000);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.lines.join("\n")) as ConformanceReport;
    const old = OLD_EVENTS.map((e) => `10-peer-plugin does not implement a dedicated ${e} RPC call`);
    expectPassed(report, version === "v0.11.0" ? { v1beta1: old, v1alpha1: old } : {});
  }, 300_000);

  it("exits 1 and prints the failing check when the plugin cannot register, and refuses a bad dialect", async () => {
    const r = await runPeer(cli, ["test-plugin", "--dialect", "v1beta1", "--registration-timeout", "300", "--", cli[0], "-e", "setTimeout(() => {}, 5000)"], 60_000);
    expect(r.code).toBe(1);
    expect(r.lines).toContain("  FAIL  registration    registers within the registration timeout with a valid name and index");
    expect(r.lines.at(-1)).toBe("1 failed: v1beta1/registration");
    const bad = await runPeer(cli, ["test-plugin", "--dialect", "v2", "--", "true"], 60_000);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe('nri-wire test-plugin: unknown dialect "v2": use v1beta1, v1alpha1, statechange');
  }, 60_000);
});
