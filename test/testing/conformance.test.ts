import { describe, expect, it } from "vitest";
import { type ConformanceReport, runConformance } from "../../src/testing/conformance.js";
import { diffJson, parseExpectations } from "../../src/testing/expectations.js";
import { formatJunit, formatTable } from "../../src/testing/conformance-report.js";
import { FLAWS, brokenStarter } from "./broken-plugin.js";

/**
 * Long enough for every healthy call and exit on a loaded machine: only the timeouts flaw waits
 * its request timeout out. The window after Shutdown is short where no stray write is to be seen.
 */
const timeouts = { requestTimeoutMs: 3000, registrationTimeoutMs: 5000, goneTimeoutMs: 5000, shutdownWindowMs: 300 };

/** The timeouts of a run of the plugin with `flaw`. */
function timeoutsFor(flaw: (typeof FLAWS)[number]): typeof timeouts {
  // The stray write comes 50 ms after the Shutdown answer: a long window reads it even after a
  // stall that fires both timers at once.
  if (flaw === "after-shutdown") return { ...timeouts, shutdownWindowMs: 5000 };
  // The plugin never goes, so the gone timeout fires whatever its length; nothing else waits on it.
  if (flaw === "restart") return { ...timeouts, goneTimeoutMs: 1000 };
  return timeouts;
}

/** The report on the plugin with the after-shutdown flaw, run once for the tests that read it. */
let afterShutdown: Promise<ConformanceReport> | undefined;
function runFlawed(flaw: (typeof FLAWS)[number]): Promise<ConformanceReport> {
  const run = (): Promise<ConformanceReport> => runConformance({ starter: brokenStarter(flaw), dialects: ["v1beta1"], ...timeoutsFor(flaw) });
  if (flaw === "after-shutdown") return (afterShutdown ??= run());
  return run();
}

/** What each broken plugin's one failure says. */
const MESSAGES: Record<(typeof FLAWS)[number], string | RegExp> = {
  registration: 'registered as "other", started as "broken" (a name the plugin sets itself wins over NRI_PLUGIN_NAME: run test-plugin with --name other)',
  configure: "Configure asked for events 0x100000, beyond the valid 0x3fff",
  synchronize: "Synchronize page 1 of 2 was answered with more = false",
  events: "RunPodSandbox (sent as nri.pkg.api.v1beta1.Plugin/RunPodSandbox) failed: unknown: boom",
  teardown: "StopContainer (sent as nri.pkg.api.v1beta1.Plugin/StopContainer) failed: unknown: boom",
  adjustments: "StartContainer (sent as nri.pkg.api.v1beta1.Plugin/StartContainer) answered with field 1, which StartContainerResponse does not have",
  ids: 'UpdateContainer updates container "ghost", which does not exist',
  creating: 'CreateContainer updates "ctr1", the container being created',
  merge: 'CreateContainer: plugins "50-broken" and "50-broken" both tried to set Env TWICE',
  timeouts: "UpdateContainer (sent as nri.pkg.api.v1beta1.Plugin/UpdateContainer) took longer than 3000 ms",
  alive: /^plugin (closed its connection|exited when its connection closed)$/u,
  unsolicited: 'UpdateContainers after PostStartContainer updates container "ghost", which does not exist',
  shutdown: "Shutdown (sent as nri.pkg.api.v1beta1.Plugin/Shutdown) failed: unknown: boom",
  "after-shutdown": /^the plugin wrote \d+ bytes after answering Shutdown$/u,
  restart: "the plugin was still running 1000 ms after the runtime closed its connection",
};

describe("the conformance suite", () => {
  it("passes the plugin without a flaw, every check exercised but those it gives nothing to", async () => {
    const report = await runConformance({ starter: brokenStarter(undefined), dialects: ["v1beta1"], ...timeouts });
    expect(report.passed).toBe(true);
    for (const f of report.dialects) {
      expect(f.checks.filter((c) => c.status !== "pass").map((c) => [c.id, c.status, c.note])).toEqual([
        ["ids", "skip", "the plugin asked for no updates or evictions"],
        ["answers", "skip", "no expectations given"],
        ["unsolicited", "skip", "the plugin sent none"],
      ]);
      // Every call of the script, answered.
      expect(f.answers.map((a) => a.method)).toEqual([
        "Configure", "Synchronize", "Synchronize", "RunPodSandbox", "CreateContainer", "ValidateContainerAdjustment", "PostCreateContainer", "StartContainer", "PostStartContainer",
        "Configure", "Synchronize", "UpdateContainer", "PostUpdateContainer", "UpdatePodSandbox", "PostUpdatePodSandbox", "StopContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox", "Shutdown",
      ]);
      expect(f.answers.find((a) => a.method === "Synchronize")).toEqual({ method: "Synchronize", wire: "nri.pkg.api.v1beta1.Plugin/Synchronize", answer: { more: true } });
      expect(f.registration).toEqual({ name: "broken", idx: "50", version: "v1beta1" });
    }
  });

  it("a plugin that speaks only v1beta1 cannot register with an older runtime", async () => {
    const report = await runConformance({ starter: brokenStarter(undefined), dialects: ["v1alpha1"], ...timeouts, registrationTimeoutMs: 500 });
    const failed = report.dialects[0]!.checks.filter((c) => c.status === "fail");
    expect(failed.map((c) => [c.id, c.failures.map((x) => x.message)])).toEqual([["registration", ["the plugin did not register within 500 ms"]]]);
    expect(report.dialects[0]!.checks.filter((c) => c.status === "pass")).toEqual([]);
  });

  it.each(FLAWS.map((f) => [f]))("fails a plugin broken for %s on that check alone", async (flaw) => {
    const report = await runFlawed(flaw);
    expect(report.passed).toBe(false);
    const failed = report.dialects[0]!.checks.filter((c) => c.status === "fail");
    expect(failed.map((c) => c.id)).toEqual([flaw]);
    const message = failed[0]!.failures[0]!.message;
    const want = MESSAGES[flaw];
    if (typeof want === "string") expect(message).toBe(want);
    else expect(message).toMatch(want);
  });

  it("refuses an answer the runtime's strict decoder refuses, with the decoder's text", async () => {
    const report = await runConformance({ starter: brokenStarter("undecodable"), dialects: ["v1beta1"], ...timeouts });
    const failed = report.dialects[0]!.checks.filter((c) => c.status === "fail");
    expect(failed.map((c) => [c.id, c.failures.map((x) => x.message)])).toEqual([
      ["events", ["CreateContainer (sent as nri.pkg.api.v1beta1.Plugin/CreateContainer) failed: decode nri.pkg.api.v1beta1.CreateContainerResponse: field adjust (1): fixed32 exceeds remaining 1"]],
    ]);
  });

  it("shows the offending message decoded: the stray write after Shutdown, the bad answer", async () => {
    const stray = await runFlawed("after-shutdown");
    const failure = stray.dialects[0]!.checks.find((c) => c.id === "after-shutdown")!.failures[0]!;
    expect(failure.offending).toEqual([{ conn: 2, stream: 3, method: "UpdateContainers", payload: { update: [{ containerId: "ctr1" }] } }]);
    const bad = await runFlawed("ids");
    expect(bad.dialects[0]!.checks.find((c) => c.id === "ids")!.failures[0]!.offending).toEqual({ update: [{ containerId: "ghost" }] });
    const table = formatTable(bad);
    expect(table).toContain('  FAIL  ids             updates and evictions name containers that exist\n                        UpdateContainer updates container "ghost", which does not exist\n');
    expect(table.endsWith("1 failed: v1beta1/ids\n")).toBe(true);
    const junit = formatJunit(bad);
    expect(junit).toContain('<testsuite name="v1beta1" tests="16" failures="1" skipped="2">');
    expect(junit).toContain('<failure message="UpdateContainer updates container &quot;ghost&quot;, which does not exist">');
  });
});

describe("the conformance suite with expectations", () => {
  it("passes answers as expected, and fails the answers check alone with each difference", async () => {
    const expectations = parseExpectations({
      CreateContainer: { answer: {} },
      UpdateContainer: { answer: { update: [{ containerId: "ctr1", linux: { resources: { memory: { limit: { value: 1024 } } } } }] }, match: "subset" },
      Synchronize: { answer: { more: false } },
    });
    const report = await runConformance({ starter: brokenStarter(undefined), dialects: ["v1beta1"], ...timeouts, expectations });
    const d = report.dialects[0]!;
    expect(d.checks.filter((c) => c.status === "fail").map((c) => [c.id, c.failures.map((x) => x.message)])).toEqual([
      [
        "answers",
        [
          "Synchronize (sent as nri.pkg.api.v1beta1.Plugin/Synchronize) was answered otherwise than expected:\n  more: expected nothing, got true",
          'UpdateContainer (sent as nri.pkg.api.v1beta1.Plugin/UpdateContainer) was answered otherwise than expected:\n  update: expected [{"containerId":"ctr1","linux":{"resources":{"memory":{"limit":{"value":"1024"}}}}}], got nothing',
        ],
      ],
    ]);
    expect(d.answers.find((a) => a.method === "CreateContainer")).toEqual({ method: "CreateContainer", wire: "nri.pkg.api.v1beta1.Plugin/CreateContainer", answer: {}, expected: { answer: {}, match: "exact" }, diff: [] });
    const table = formatTable(report);
    expect(table).toContain("  answers:\n    Configure  {}\n");
    expect(table).toContain('    UpdateContainer  {}\n      expected (subset) {"update":[{"containerId":"ctr1","linux":{"resources":{"memory":{"limit":{"value":"1024"}}}}}]}\n      update: expected');
    expect(formatJunit(report)).toContain('<testcase classname="nri-wire.test-plugin.v1beta1" name="answers: answers each event as the expectations say (--expect)">\n      <failure message="Synchronize');
  });

  it("takes a refusal the expectations ask for as the plugin doing its job, and fails one that does not come", async () => {
    const refusing = await runConformance({ starter: brokenStarter("events"), dialects: ["v1beta1"], ...timeouts, expectations: parseExpectations({ RunPodSandbox: { refusal: "boom" } }) });
    expect(refusing.passed).toBe(true);
    expect(refusing.dialects[0]!.answers.find((a) => a.method === "RunPodSandbox")).toMatchObject({ refusal: "boom", diff: [] });
    const answering = await runConformance({ starter: brokenStarter(undefined), dialects: ["v1beta1"], ...timeouts, expectations: parseExpectations({ ValidateContainerAdjustment: { refusal: "" } }) });
    expect(answering.dialects[0]!.checks.filter((c) => c.status === "fail").map((c) => [c.id, c.failures.map((x) => x.message)])).toEqual([
      ["answers", ["ValidateContainerAdjustment (sent as nri.pkg.api.v1beta1.Plugin/ValidateContainerAdjustment) was answered otherwise than expected:\n  expected a refusal, got the answer {}"]],
    ]);
  });

  it("says each difference by its path, as docs/tools.md shows", () => {
    const want = { adjust: { rlimits: [{ type: "RLIMIT_NOFILE", hard: "4096", soft: "1024" }] } };
    const got = { adjust: { rlimits: [{ type: "RLIMIT_NOFILE", hard: "2048", soft: "1024" }] } };
    expect(diffJson(want, got, "exact")).toEqual(['adjust.rlimits[0].hard: expected "4096", got "2048"']);
    expect(diffJson({ adjust: { annotations: { "a/b": "1" } } }, { adjust: { annotations: { "a/b": "1", c: "2" } } }, "subset")).toEqual([]);
    expect(diffJson({ adjust: { annotations: { "a/b": "1" } } }, { adjust: { annotations: { "a/b": "1", c: "2" } } }, "exact")).toEqual(['adjust.annotations.c: expected nothing, got "2"']);
  });

  it("refuses an expectations file naming an unknown event or field, or giving both an answer and a refusal", () => {
    expect(() => parseExpectations({ CreateContainr: { answer: {} } })).toThrow(/^expectations: unknown event "CreateContainr": use Configure, Synchronize, Shutdown, RunPodSandbox, /u);
    expect(() => parseExpectations({ CreateContainer: { answer: { adjust: { enviroment: [] } } } })).toThrow('expectations: CreateContainer: answer: cannot decode message nri.pkg.api.v1beta1.ContainerAdjustment from JSON: key "enviroment" is unknown');
    expect(() => parseExpectations({ CreateContainer: { answer: {}, refusal: "x" } })).toThrow("expectations: CreateContainer: give either answer or refusal");
    expect(() => parseExpectations({ CreateContainer: { answer: {}, match: "some" } })).toThrow('expectations: CreateContainer: match: "some" is not exact or subset');
  });
});
