import { type Socket, connect, createServer } from "node:net";
import { join } from "node:path";
import { tempDir } from "./temp.js";

/** A fresh directory for sockets, removed after the test file (see temp.ts). */
export function socketDir(): string {
  return tempDir();
}

/** A socket path in a fresh directory. */
export function socketPath(name = "nri.sock"): string {
  return join(socketDir(), name);
}

/** Two ends of a connected unix socket, and a function that stops the listener. */
export async function trunkPair(): Promise<[Socket, Socket, () => void]> {
  const path = socketPath("t.sock");
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(path, r));
  const accepted = new Promise<Socket>((r) => srv.once("connection", r));
  const a = connect(path);
  await new Promise((r) => a.once("connect", r));
  return [a, await accepted, () => srv.close()];
}

/** A TCP port nothing listens on now, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}
