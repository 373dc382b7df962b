/**
 * `npm run demo`: the example runtime and one example plugin of each dialect, as separate
 * processes over a real unix socket, shown as a timeline: each event, how each plugin received
 * it, what came back, and the deprecation warnings the runtime recorded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

const cli = resolve(import.meta.dirname, "../src/cli/main.ts");
const dir = mkdtempSync(join(tmpdir(), "nri-wire-demo-"));
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
const socket = join(dir, "nri.sock");
const plugins = [
  { idx: "10", name: "modern", dialect: "v1beta1", about: "v1beta1 plugin (serves both revisions)" },
  { idx: "20", name: "classic", dialect: "v1alpha1", about: "v1alpha1 plugin of the dedicated era (NRI >= v0.12)" },
  { idx: "30", name: "legacy", dialect: "statechange", about: "v1alpha1 plugin of the StateChange era (NRI <= v0.11)" },
];

function run(args: string[], onLine: (line: Record<string, unknown>) => void, stderr: "inherit" | "ignore" = "inherit"): { child: ChildProcess; done: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", cli, ...args], { stdio: ["ignore", "pipe", stderr] });
  createInterface({ input: child.stdout! }).on("line", (l) => onLine(JSON.parse(l) as Record<string, unknown>));
  return { child, done: new Promise((r) => child.on("exit", (code) => r(code))) };
}

const pad = (s: string, n: number): string => s.padEnd(n);
const received = new Map<string, string[]>();
const shutdownReasons = new Map<string, string>();
let ready!: () => void;
const listening = new Promise<void>((r) => (ready = r));
const timeline: string[] = [];
/** The events the three plugins' identical answers make conflict: refused by design. */
const EXPECTED_REFUSALS = new Set(["CreateContainer", "UpdateContainer"]);
const unexpected: string[] = [];
let deprecations: { plugin: string; deprecated: string; detail: string }[] = [];

const runtime = run(["example-runtime", "--socket", socket, "--plugins", String(plugins.length)], (line) => {
  if (line.ready === true) return ready();
  if (Array.isArray(line.deprecations)) {
    deprecations = line.deprecations as typeof deprecations;
    return;
  }
  const via = (line.plugins as { plugin: string; via: string }[] | undefined) ?? [];
  const result = line.result as { annotations?: Record<string, string>; env?: string[]; updates?: { container: string; cpu_shares?: number }[] };
  let back = "";
  if (result.annotations !== undefined) back = `adjust: ${Object.entries(result.annotations).map(([k, v]) => `${k}=${v}`).join(" ")}, env ${(result.env ?? []).join(" ")}`;
  if (result.updates !== undefined && result.updates.length > 0) back = `updates: ${result.updates.map((u) => `${u.container} cpu.shares=${u.cpu_shares}`).join(", ")}`;
  const event = String(line.event);
  const expected = EXPECTED_REFUSALS.has(event);
  if (line.ok !== true) back = `refused${expected ? " (expected)" : ""}: '${String(line.error)}'`;
  if ((line.ok === true) === expected) unexpected.push(event);
  const status = line.ok === true ? "ok     " : expected ? "refused" : "FAILED ";
  timeline.push(`${pad(event, 22)}${status} ${via.map((v) => `${v.plugin.slice(3)}: ${v.via}`).join(" | ")}${back === "" ? "" : `\n${" ".repeat(30)}→ ${back}`}`);
}, "ignore");

await listening;
console.log(`nri-wire demo: one runtime, three plugins, one unix socket (${socket})`);
console.log("It shows: plugins of three protocol eras served by one runtime, each event reaching each plugin the");
console.log("way that plugin speaks (v1beta1, v1alpha1, or StateChange), the answers merged, and the deprecation");
console.log("warnings a containerd runtime would log for the oldest plugin.\n");
for (const p of plugins) console.log(`  ${p.idx}-${p.name.padEnd(8)} ${p.about}`);
const children = plugins.map((p) =>
  run(["example-plugin", "--socket", socket, "--idx", p.idx, "--name", p.name, "--dialect", p.dialect], (line) => {
    const list = received.get(p.name) ?? [];
    list.push(String(line.event));
    received.set(p.name, list);
    if (line.event === "Shutdown") shutdownReasons.set(p.name, String(line.reason));
  }, "ignore"),
);
const code = await runtime.done;
await Promise.all(children.map((c) => c.done));

console.log(`\n${pad("event", 22)}        how each plugin received it, and what came back`);
for (const l of timeline) console.log(l);
console.log(`\nShutdown: ${plugins.map((p) => `${p.name} got ${JSON.stringify(shutdownReasons.get(p.name) ?? "(nothing)")}`).join(", ")}`);
console.log("  (v1alpha1's Shutdown takes Empty, so the reason reaches v1beta1 plugins only)");
console.log(`plugins saw: ${plugins.map((p) => `${p.name} ${received.get(p.name)?.length ?? 0} calls`).join(", ")}`);
console.log(`\ndeprecations recorded by the runtime, as containerd records them (${deprecations.length}):`);
for (const d of deprecations) console.log(`  ${d.plugin}: NRI plugin uses a deprecated interface. deprecated=${d.deprecated}: ${d.detail}`);
console.log("\nThe two refusals are expected: the three plugins answer alike, and a field has one owner, so the");
console.log("second plugin to set the same annotation or CPU shares is refused with containerd's own error text");
console.log("(for a field without a key, such as CPUShares, that text ends in a space).");
if (unexpected.length > 0) console.log(`\nUNEXPECTED: ${unexpected.join(", ")} did not end as the demo expects`);
// The example runtime exits 1 when an event failed (expected here) and otherwise only on a crash.
const childCodes = await Promise.all(children.map((c) => c.done));
process.exitCode = (code === 0 || code === 1) && childCodes.every((c) => c === 0) && unexpected.length === 0 ? 0 : 1;
