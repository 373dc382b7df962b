import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CampaignOptions, type CampaignState, loadKept, newTargetState, nextTarget, runCampaign } from "../../scripts/fuzz/campaign.js";
import { inputToJson } from "../../scripts/fuzz/input-json.js";
import { minimize } from "../../scripts/fuzz/minimize.js";
import { loadReproducer } from "../../scripts/fuzz/reproducer.js";
import { Finding, type FuzzTarget, defineTarget } from "../../scripts/fuzz/target.js";
import { fuzzTargets } from "../../scripts/fuzz/targets.js";

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "nriw-fuzz-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const options = (dir: string, goal: number, targets: CampaignOptions["targets"] = fuzzTargets, filter = ["mux", "translate"]): CampaignOptions => ({
  dir,
  seed: 7,
  goal,
  filter,
  sliceSeconds: 600,
  stopAfterSeconds: Infinity,
  log: () => undefined,
  targets,
});

const state = (dir: string): CampaignState => JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as CampaignState;

/** What a campaign decided, without its timings and runs. */
function outcome(dir: string): unknown {
  return Object.entries(state(dir).targets).map(([name, t]) => ({
    name,
    next: t.next,
    ok: t.ok,
    errors: t.errors,
    tallies: t.tallies,
    outcomes: t.outcomes,
    kept: JSON.stringify(loadKept(dir, name)),
  }));
}

/** A target whose input is one byte; 7 is a finding unless `fixed`. */
const sevens = (fixed: boolean): FuzzTarget =>
  defineTarget<{ b: Uint8Array }>(
    {
      name: "sevens",
      errorClass: "",
      afterError: "",
      draw: (rng) => ({ b: rng.bytes(1) }),
      check: ({ b }) => {
        if (b[0] === 7 && !fixed) throw new Finding("seven");
        return b[0]! < 128 ? "ok" : { error: "high" };
      },
    },
    { b: "bytes" },
  );

describe("fuzz campaign (npm run fuzz -- --resume)", () => {
  it("stopped and resumed, runs exactly the inputs of a campaign that never stopped", async () => {
    const [a, b] = [tempDir(), tempDir()];
    expect(await runCampaign(options(a, 1000), () => false)).toBe(0);
    expect(state(a).targets.mux!.next).toBe(1000);
    expect(await runCampaign(options(a, 2000), () => false)).toBe(0);
    expect(await runCampaign(options(b, 2000), () => false)).toBe(0);
    expect(outcome(a)).toEqual(outcome(b));
    expect(state(a).targets.mux!.runs.map((r) => [r.from, r.to])).toEqual([[0, 1000], [1000, 2000]]);
    // The generated seeds are kept, so a resumed campaign reads them instead of generating others.
    expect(readFileSync(join(a, "corpus.json"), "utf8")).toBe(readFileSync(join(b, "corpus.json"), "utf8"));
  });

  it("saves a finding with its input and replay command, stops, and goes on only once it is fixed", async () => {
    const dir = tempDir();
    const failing = options(dir, 5000, () => [sevens(false)], []);
    expect(await runCampaign(failing, () => false)).toBe(1);
    const files = readdirSync(join(dir, "findings"));
    expect(files).toHaveLength(1);
    const r = loadReproducer(join(dir, "findings", files[0]!));
    expect([r.target, r.message, r.input]).toEqual(["sevens", "seven", { b: Uint8Array.of(7) }]);
    expect(r.replay).toMatch(/^npm run fuzz -- --replay .*sevens-\d+\.json$/);
    const next = state(dir).targets.sevens!.next;
    expect(next).toBe(r.found.index + 1);
    // Still failing: the campaign refuses to go on.
    expect(await runCampaign(failing, () => false)).toBe(1);
    expect(state(dir).targets.sevens!.next).toBe(next);
    // Fixed: it goes on from the input after the finding.
    expect(await runCampaign(options(dir, 5000, () => [sevens(true)], []), () => false)).toBe(0);
    const t = state(dir).targets.sevens!;
    expect([t.next, t.findings, t.runs.map((x) => x.from)]).toEqual([5000, 1, [0, next]]);
  });

  it("runs a target not run yet first, then the one with the least CPU time left to its goal", () => {
    const t = (name: string): FuzzTarget => ({ ...sevens(true), name });
    const at = (next: number, cpuSeconds: number): CampaignState["targets"][string] => ({ ...newTargetState(), next, cpuSeconds });
    const targets = [t("slow"), t("fast"), t("new")];
    const s: CampaignState = { format: 1, seed: 1, goal: 1000, targets: { slow: at(500, 50), fast: at(100, 1), new: at(0, 0) } };
    expect(nextTarget(targets, s).name).toBe("new");
    // slow: 500 left at 10 per second, 50 s; fast: 900 left at 100 per second, 9 s.
    expect(nextTarget(targets.slice(0, 2), s).name).toBe("fast");
  });

  it("minimizes a finding to the bytes that matter, protobuf fields and their lengths included", () => {
    // Fails when field 2 holds a message whose field 1 is "k", whatever else is around it.
    const target = defineTarget<{ bytes: Uint8Array; chunks: readonly Uint8Array[] }>(
      {
        name: "nested",
        errorClass: "",
        afterError: "",
        draw: () => ({ bytes: new Uint8Array(0), chunks: [] }),
        check: ({ bytes, chunks }) => {
          const hex = Buffer.from(bytes).toString("hex");
          if (/12(..)0a016b/.test(hex) && chunks.some((c) => c.includes(9))) throw new Finding(`bad input of ${bytes.length} bytes`);
          return "ok";
        },
      },
      { bytes: "bytes", chunks: "chunks" },
    );
    const big = Buffer.from("0a03616263" + "1209" + "0a016b" + "1204" + "74657374" + "1801", "hex");
    const { input } = minimize(target, { bytes: big, chunks: [Uint8Array.of(1, 2), Uint8Array.of(3, 9, 4)] }, "bad input of 16 bytes");
    expect(Buffer.from(input.bytes as Uint8Array).toString("hex")).toBe("12030a016b");
    expect(input.chunks).toEqual([Uint8Array.of(9)]);
  });

  it("npm run fuzz -- --replay exits 1 while a reproducer still fails, and names it", () => {
    const dir = tempDir();
    const bad = join(dir, "translate-1.json");
    const good = join(dir, "translate-2.json");
    const input = { fn: "toV1beta1", service: "nri.pkg.api.v1alpha1.Plugin", method: "StateChange", payload: Uint8Array.of(8, 1), dialect: "dedicated" };
    const reproducer = (i: object): string => JSON.stringify({ target: "translate", message: "m", replay: "", found: {}, input: inputToJson(i as never) });
    // An input no check accepts (an unknown translation function) replays as a harness failure.
    writeFileSync(bad, reproducer({ ...input, fn: "toV1gamma" }));
    writeFileSync(good, reproducer(input));
    const run = spawnSync(process.execPath, ["--import", "tsx", resolve(import.meta.dirname, "../../scripts/fuzz/main.ts"), "--replay", bad, good], { encoding: "utf8" });
    expect(run.stdout).toContain(`${bad}: translate: FINDING: harness threw Error: fuzz: translate input with fn toV1gamma`);
    expect(run.stdout).toContain(`${good}: translate: no finding`);
    expect(run.stdout).toContain("fuzz: 2 reproducers, 1 still failing");
    expect(run.status).toBe(1);
  });
});
