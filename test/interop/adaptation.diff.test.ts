import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { describeDifference, type LogLines, normalizeLine, sortValidatorMetrics, splitLogs } from "./diff-lines.js";
import { SCENARIOS } from "./diff-scenarios.js";
import { runScenario } from "./diff-runtime.js";
import { runPeer, socketDir } from "./support.js";
import { useGoPeers } from "../support/go-peers.js";
import { GO_TEXTS_FILE } from "../support/go-texts.js";
import { GO_OWN_TEXTS, GO_TEXTS } from "./go-texts.js";

/**
 * The differential test of the runtime side: every scenario of diff-scenarios.ts runs on the Go
 * reference (containerd/nri v0.12.5 pkg/adaptation, test/interop/diff-peer) and on nri-wire's
 * runtime (diff-runtime.ts, in this process), each with its own instances of the same scripted Go plugins, over
 * real sockets; the two outputs must be the same, line by line (DIFF.md).
 */

/**
 * Scenarios where nri-wire's runtime is known to answer differently from Go, each with the
 * difference. They run as expected failures: the day the runtime agrees with Go, the test fails
 * until its entry here is removed.
 */
const KNOWN_MISMATCHES: Record<string, string> = {
};

/**
 * Differences nri-wire's runtime shows only sometimes (a race of its own), so they cannot be
 * expected failures: a TypeScript output line (or, with `logged`, a line the runtime logged)
 * matching `ts` counts as Go's `go`, with a notice.
 */
const INTERMITTENT: Record<string, { go: string; ts: RegExp; why: string; logged?: true }[]> = {
  "synchronize-timeout": [
    {
      go: '{"error":"context deadline exceeded","sync":"10-hangs"}',
      ts: /^\{"error":"rpc error: code = DeadlineExceeded desc = deadline of [0-9.]+ ms exceeded","sync":"10-hangs"\}$/,
      why: "a Synchronize past the request timeout ends with the ttrpc client's own deadline error when its timer fires before the runtime's",
    },
    {
      go: '{"error":"context deadline exceeded","metric":"invocation","op":"Synchronize","plugin":"10-hangs"}',
      ts: /^\{"error":"rpc error: code = DeadlineExceeded desc = deadline of [0-9.]+ ms exceeded","metric":"invocation","op":"Synchronize","plugin":"10-hangs"\}$/,
      why: "the same Synchronize, as the metrics hooks record it",
    },
    {
      logged: true,
      go: "failed to synchronize plugin: context deadline exceeded",
      ts: /^failed to synchronize plugin: rpc error: code = DeadlineExceeded desc = deadline of [0-9.]+ ms exceeded$/,
      why: "the same Synchronize, in the line logged for it",
    },
  ],
};

/** `line` as Go's, when it is a known intermittent difference of the scenario (with a notice). */
function intermittent(name: string, line: string, logged: boolean): string {
  const known = INTERMITTENT[name]?.find((k) => (k.logged ?? false) === logged && k.ts.test(line));
  if (known === undefined) return line;
  console.warn(`runtime differential: ${name}: known intermittent difference (${known.why}):\n  go: ${known.go}\n  ts: ${line}`);
  return known.go;
}

/**
 * Lines the Go runtime logs and nri-wire's does not, each with why. They are left out of the
 * comparison of the logs; the test fails the day nri-wire logs one (remove its entry then), or
 * no scenario makes Go log it any more.
 */
const NOT_LOGGED: { level: "error" | "warn"; go: RegExp; why: string }[] = [
  { level: "error", go: /^rejecting adjustment: /u, why: "the default validator's rejections: Go's logs each at error level as well as failing the event" },
  { level: "warn", go: /^please update \S+ with a newer version of NRI for future compatibility$/u, why: "Go follows each StateChange deprecation warning with a second one" },
];
const notLoggedSeen = new Set<number>();
/** Scenarios whose logs were compared: the entries are judged stale only when every scenario ran. */
let compared = 0;

/**
 * The logs must agree: at error and warn level line for line (but for NOT_LOGGED), at info
 * level nri-wire logs a part of what Go logs (Go logs its own progress too: interface
 * created, invocation order...), with the same texts.
 */
function logDifferences(go: LogLines, ts: LogLines): string[] {
  const out: string[] = [];
  for (const level of ["error", "warn"] as const) {
    const expected = (go[level] ?? []).filter((l) => {
      const i = NOT_LOGGED.findIndex((n) => n.level === level && n.go.test(l));
      if (i >= 0) notLoggedSeen.add(i);
      return i < 0;
    });
    const mine = ts[level] ?? [];
    for (const n of NOT_LOGGED) if (n.level === level && mine.some((l) => n.go.test(l))) out.push(`nri-wire now logs ${n.go} at ${level} level: remove its NOT_LOGGED entry`);
    if (expected.join("\n") !== mine.join("\n")) out.push(`${level} lines differ:\n  go: ${JSON.stringify(expected)}\n  ts: ${JSON.stringify(mine)}`);
  }
  const goInfo = [...(go.info ?? [])];
  for (const l of ts.info ?? []) {
    const i = goInfo.indexOf(l);
    if (i < 0) out.push(`info line Go did not log: ${JSON.stringify(l)}`);
    else goInfo.splice(i, 1);
  }
  return out;
}

const { hasGo, bin } = useGoPeers({ peer: ["diff-peer", "diff-peer"] });

/** Go's texts as recorded, and as Go printed them in this run (go-texts.ts). */
const UPDATE_TEXTS = process.env.NRI_WIRE_UPDATE_GO_TEXTS === "1";
const recordedTexts = existsSync(GO_TEXTS_FILE) ? (JSON.parse(readFileSync(GO_TEXTS_FILE, "utf8")) as Record<string, string>) : {};
const printedTexts: Record<string, string> = {};

/** What is wrong with the Go texts `name`'s output shows (go-texts.ts); when recording, keeps them. */
function goTextProblems(name: string, out: { rest: string[]; logs: LogLines }): string[] {
  const lines = out.rest.map((l) => JSON.parse(l) as Record<string, unknown>);
  const problems: string[] = [];
  for (const [key, t] of Object.entries(GO_TEXTS)) {
    if (t.scenario !== name) continue;
    const text = t.pick({ lines, logs: out.logs });
    if (text === undefined) problems.push(`Go printed nothing for the text "${key}" (go-texts.ts)`);
    else if (UPDATE_TEXTS) printedTexts[key] = text;
    else if (recordedTexts[key] !== text) problems.push(`the Go text "${key}" is recorded as ${JSON.stringify(recordedTexts[key])} but Go printed ${JSON.stringify(text)} (NRI_WIRE_UPDATE_GO_TEXTS=1 records it again)`);
  }
  return problems;
}

afterAll(() => {
  if (UPDATE_TEXTS) {
    const keys = [...Object.keys(GO_TEXTS), ...GO_OWN_TEXTS.map((k) => `go: ${k}`)];
    const missing = keys.filter((k) => printedTexts[k] === undefined);
    if (missing.length > 0) throw new Error(`runtime differential: not recording the Go texts: no run printed ${missing.join(", ")}`);
    writeFileSync(GO_TEXTS_FILE, `${JSON.stringify(Object.fromEntries(keys.sort().map((k) => [k, printedTexts[k]])), null, 2)}\n`);
  }
  if (compared < Object.keys(SCENARIOS).length) return;
  const stale = NOT_LOGGED.filter((_, i) => !notLoggedSeen.has(i)).map((n) => String(n.go));
  if (stale.length > 0) throw new Error(`runtime differential: no scenario made Go log ${stale.join(", ")}: remove the NOT_LOGGED entries`);
});

// Scenarios run a few at a time: each mostly waits on its processes.
describe.concurrent("runtime differential", () => {
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    const known = KNOWN_MISMATCHES[name];
    const test = !hasGo ? it.skip : known === undefined ? it : it.fails;
    test(`${name}: ${known === undefined ? scenario.description : `known mismatch: ${known}`}`, async ({ expect }) => {
      const dir = socketDir();
      const file = join(dir, "scenario.json");
      writeFileSync(file, JSON.stringify(scenario));
      const goWork = join(dir, "go");
      const tsWork = join(dir, "ts");
      mkdirSync(goWork);
      mkdirSync(tsWork);
      // The two runtimes run at once, nri-wire's in this process: each has its own socket,
      // directories and plugin processes.
      const [go, ts] = await Promise.all([runPeer([bin.peer, []], ["runtime", "--scenario", file, "--work", goWork]), runScenario(scenario, tsWork, bin.peer)]);
      expect(go.code, `Go driver failed:\n${go.stderr}`).toBe(0);
      const goLines = sortValidatorMetrics(go.lines.map((l) => normalizeLine(l, scenario)));
      const tsLines = sortValidatorMetrics(ts.map((l) => intermittent(name, normalizeLine(l, scenario), false)));
      expect(goLines.length, "the Go driver printed nothing").toBeGreaterThan(0);
      // Go's Metrics hooks are compared too: a runtime that started has counted its plugins.
      if (!goLines.some((l) => l.startsWith('{"start":'))) expect(goLines.some((l) => l.startsWith('{"count":'))).toBe(true);
      const goOut = splitLogs(goLines);
      const tsOut = splitLogs(tsLines);
      for (const level of Object.keys(tsOut.logs)) tsOut.logs[level] = tsOut.logs[level]!.map((l) => intermittent(name, l, true)).sort();
      expect(Object.keys(goOut.logs).sort(), "the Go driver printed no log lines").toEqual(["error", "info", "warn"]);
      expect(tsOut.rest.join("\n"), `${name}: ${describeDifference(goOut.rest, tsOut.rest)}`).toBe(goOut.rest.join("\n"));
      expect(logDifferences(goOut.logs, tsOut.logs), `${name}: the runtimes' logs`).toEqual([]);
      expect(goTextProblems(name, goOut)).toEqual([]);
      compared++;
    }, 90_000);
  }

  it.skipIf(!hasGo)("Go's own texts a runtime passes on (diff-peer texts) are the recorded ones", async ({ expect }) => {
    const r = await runPeer([bin.peer, []], ["texts"]);
    expect(r.code).toBe(0);
    const texts = JSON.parse(r.lines[0]!) as Record<string, string>;
    for (const k of GO_OWN_TEXTS) {
      expect(texts[k], `diff-peer texts printed no ${k}`).toBeDefined();
      if (UPDATE_TEXTS) printedTexts[`go: ${k}`] = texts[k]!;
      else expect(recordedTexts[`go: ${k}`], `the Go text "go: ${k}" (NRI_WIRE_UPDATE_GO_TEXTS=1 records it again)`).toBe(texts[k]);
    }
  });
});
