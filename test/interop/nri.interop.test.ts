import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SCRIPT_EVENTS, viaStateChange } from "../support/lifecycle-events.js";
import { runPeer, socketDir, startPeer, tsCommand } from "./support.js";
import { type NriRelease, nriPeer, useGoPeers } from "../support/go-peers.js";
import { SLOW_START_GO_RUNTIME, SLOW_START_TEST_MS } from "../support/slow-start.js";
import { eventually } from "../support/wait.js";

/**
 * The interop matrix: every runtime against every plugin over a real unix socket, with the
 * script of test/interop/PEERS.md. The Go peer (test/interop/nri-peer) is built twice on the real
 * upstream pkg/adaptation and pkg/stub: against containerd/nri v0.12.5 (dedicated era, go.mod)
 * and v0.11.0 (StateChange era, nri-v0.11.0.mod); v0.8.0 (nri-v0.8.0.mod) is a runtime only.
 */

type Cmd = [string, string[]];
const cli = tsCommand("src/cli/main.ts");
const { hasGo, bin } = useGoPeers({ "v0.12.5": nriPeer("nri-peer", "v0.12.5"), "v0.11.0": nriPeer("nri-peer", "v0.11.0"), "v0.8.0": nriPeer("nri-peer", "v0.8.0") });
const go = (release: string): Cmd => [bin[release as NriRelease], []];

const runtimes = ["nri-wire", "go v0.12.5", "go v0.11.0", "go v0.8.0"] as const;

/**
 * The runtimes that refuse every plugin of the matrix, with the refusal they log: v0.8.0 (the
 * NRI of containerd 2.0 and 2.1) knows no UpdatePodSandbox, PostUpdatePodSandbox or
 * ValidateContainerAdjustment, and rejects a plugin subscribing to them.
 */
const REFUSES: Partial<Record<(typeof runtimes)[number], string>> = { "go v0.8.0": "failed to start external plugin: invalid plugin events: 0x3800" };
const plugins = ["nri-wire v1beta1", "nri-wire v1alpha1", "nri-wire statechange", "go v0.12.5", "go v0.11.0"] as const;

function runtimeCmd(r: (typeof runtimes)[number]): [Cmd, string[]] {
  if (r === "nri-wire") return [cli, ["example-runtime"]];
  return [go(r.slice(3)), ["runtime", ...SLOW_START_GO_RUNTIME]];
}

function pluginCmd(p: (typeof plugins)[number]): [Cmd, string[]] {
  if (p.startsWith("nri-wire")) return [cli, ["example-plugin", "--dialect", p.slice(9)]];
  return [go(p.slice(3)), ["plugin"]];
}

const EVENTS = SCRIPT_EVENTS;

/** The nine events a StateChange-era plugin receives as StateChange, in the script's order. */
const STATE_CHANGE = viaStateChange(EVENTS);

interface DeprecationRecord {
  plugin: string;
  deprecated: string;
  detail: string;
}

/**
 * A runtime that knows dedicated calls records one deprecation per event for a StateChange-era
 * plugin, as containerd records it.
 */
function expectedDeprecations(r: string, p: string): DeprecationRecord[] {
  const oldPlugin = p === "nri-wire statechange" || p === "go v0.11.0";
  if (!oldPlugin || r === "go v0.11.0") return [];
  return STATE_CHANGE.map((e) => ({ plugin: "10-peer-plugin", deprecated: "StateChange", detail: `does not implement a dedicated ${e} RPC call` }));
}

interface RuntimeLine {
  event?: string;
  ok?: boolean;
  error?: string;
  result?: { annotations?: Record<string, string>; env?: string[]; updates?: { container: string; cpu_shares?: number }[] };
  deprecations?: DeprecationRecord[];
}

const matrix = runtimes.flatMap((r) => plugins.map((p) => [r, p] as const));

describe.each(matrix)("NRI interop: %s runtime with %s plugin", (r, p) => {
  const needsGo = r.startsWith("go") || p.startsWith("go");
  it.skipIf(needsGo && !hasGo)("delivers every event, returns the adjustments, records exactly the expected deprecations", async () => {
    const socket = join(socketDir(), "nri.sock");
    const [rc, rargs] = runtimeCmd(r);
    const runtime = startPeer(rc, [...rargs, "--socket", socket]);
    await runtime.waitFor((l) => l.includes('"ready":true'));
    const [pc, pargs] = pluginCmd(p);
    const plugin = await runPeer(pc, [...pargs, "--socket", socket]);
    const refusal = REFUSES[r];
    if (refusal !== undefined) {
      // Refused right after Configure: the plugin exits (nri-wire's with 1, as its start failed;
      // the Go stub's with 0), the runtime would wait for it.
      await eventually(() => runtime.stderr().includes(refusal), `the runtime to log ${JSON.stringify(refusal)}`);
      runtime.child.kill("SIGTERM");
      await runtime.exited;
      expect(plugin.lines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(["Configure"]);
      return;
    }
    const rcode = await runtime.closed;
    const diag = `runtime stderr:\n${runtime.stderr()}\nplugin stderr:\n${plugin.stderr}`;
    expect(rcode, diag).toBe(0);
    expect(plugin.code, diag).toBe(0);

    const lines = runtime.lines.map((l) => JSON.parse(l) as RuntimeLine);
    const events = lines.filter((l) => l.event !== undefined);
    expect(events.map((l) => [l.event, l.ok, l.error])).toEqual(EVENTS.map((e) => [e, true, undefined]));
    const byEvent = new Map(events.map((l) => [l.event!, l.result]));
    expect(byEvent.get("CreateContainer")).toMatchObject({ annotations: { "nri-wire/seen": "true" }, env: ["NRI_WIRE_SEEN=true"] });
    expect(byEvent.get("UpdateContainer")?.updates).toContainEqual({ container: "ctr1", cpu_shares: 512 });
    expect(lines.find((l) => l.deprecations !== undefined)?.deprecations).toEqual(expectedDeprecations(r, p));

    const received = plugin.lines.map((l) => JSON.parse(l) as { plugin: string; event: string; pod?: string; container?: string; pods?: number; containers?: number });
    expect(received.every((l) => l.plugin === "10-peer-plugin")).toBe(true);
    expect(received.find((l) => l.event === "Synchronize")).toMatchObject({ pods: 1, containers: 1 });
    const got = received.map((l) => l.event).filter((e) => EVENTS.includes(e));
    expect(got).toEqual(EVENTS);
    for (const l of received.filter((x) => EVENTS.includes(x.event))) {
      expect(l.pod).toBe("pod1");
      expect(l.container).toBe(/PodSandbox/.test(l.event) ? "" : "ctr1");
    }
  }, SLOW_START_TEST_MS);
});
