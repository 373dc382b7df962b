import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Client } from "../src/ttrpc/client.js";
import { socketDir, startPeer } from "../test/interop/support.js";

/** A memory figure of a live process from /proc, in KiB. */
export function rssKiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (m === null) throw new Error(`bench: no ${field} for pid ${pid}`);
  return Number(m[1]);
}

/** Idle and peak RSS of a peer server while `n` Sleep calls are in flight on one connection. */
export async function inflightRss(server: [string, string[]], n: number): Promise<{ idleKiB: number; peakKiB: number }> {
  const socket = join(socketDir(), "m.sock");
  const srv = startPeer(server, ["serve", "--socket", socket]);
  await srv.waitFor((l) => l === "ready");
  const pid = srv.child.pid!;
  const sock = connect(socket);
  await new Promise((r) => sock.once("connect", r));
  const client = new Client(sock);
  await client.call("ttrpc.peer.v1.Peer", "Echo", new Uint8Array(1));
  const idleKiB = rssKiB(pid, "VmRSS");
  const payload = new TextEncoder().encode("3000");
  const calls = Array.from({ length: n }, () => client.call("ttrpc.peer.v1.Peer", "Sleep", payload));
  await new Promise((r) => setTimeout(r, 1500));
  const peakKiB = rssKiB(pid, "VmHWM");
  await Promise.all(calls);
  client.close();
  srv.child.kill("SIGTERM");
  await srv.exited;
  return { idleKiB, peakKiB };
}
