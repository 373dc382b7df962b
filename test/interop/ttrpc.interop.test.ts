import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Peer, runPeer, socketDir, startPeer, tsCommand } from "./support.js";
import { useGoPeers } from "../support/go-peers.js";

interface Check {
  check: string;
  pass: boolean;
  detail: string;
}

const { hasGo, bin } = useGoPeers({ go: ["go-peer", "go-peer"] });
const peers: Record<"go" | "ts", () => [string, string[]]> = {
  go: () => [bin.go, []],
  ts: () => tsCommand("test/interop/ts-peer.ts"),
};

const pairings: ["go" | "ts", "go" | "ts"][] = [
  ["ts", "ts"],
  ["ts", "go"],
  ["go", "ts"],
  ["go", "go"],
];

describe.each(pairings)("ttrpc conformance: %s client against %s server", (clientSide, serverSide) => {
  const needsGo = clientSide === "go" || serverSide === "go";
  let server: Peer | undefined;
  let socket = "";

  beforeAll(async () => {
    if (needsGo && !hasGo) return;
    socket = join(socketDir(), "peer.sock");
    server = startPeer(peers[serverSide](), ["serve", "--socket", socket]);
    await server.waitFor((l) => l === "ready");
  }, 60_000);

  afterAll(async () => {
    if (server === undefined) return;
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });

  it.skipIf(needsGo && !hasGo)("passes every check", async () => {
    const run = await runPeer(peers[clientSide](), ["call", "--socket", socket]);
    const records = run.lines.map((l) => JSON.parse(l) as Check | { summary: true; passed: number; failed: number });
    const checks = records.filter((r): r is Check => "check" in r);
    const failed = checks.filter((c) => !c.pass);
    console.log(`${clientSide} -> ${serverSide}: ${checks.length - failed.length} of ${checks.length} checks passed`);
    expect(failed).toEqual([]);
    expect(checks.length).toBeGreaterThan(40);
    expect(run.code).toBe(0);
  }, 180_000);
});
