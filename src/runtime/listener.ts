import { rmdir, unlink } from "node:fs/promises";
import type { Server, Socket } from "node:net";
import { dirname } from "node:path";
import { listenUnix } from "../internal/listen.js";
import { goPathError } from "./go/errno.js";

/** A listening unix socket whose file never had a mode wider than asked. */
export interface SafeListener {
  readonly server: Server;
  /** Stops listening and removes the socket file if it is still ours. */
  close(): Promise<void>;
}

/**
 * Listens on `path` as the reference does: whatever is at the path (a stale socket, a file, an
 * empty directory) is removed first; then `listenUnix` binds so that the socket never has a mode
 * wider than `mode`. Rejects with the reference's text: `failed to create socket "<path>": ...`.
 */
export async function listenSafely(path: string, mode: number, onConnection: (socket: Socket) => void): Promise<SafeListener> {
  await unlink(path).catch(() => rmdir(path).catch(() => undefined));
  let server: Server;
  try {
    server = await listenUnix(path, onConnection, { mode });
  } catch (e) {
    const cause = (e as Error).cause ?? e;
    const mkdir = (cause as NodeJS.ErrnoException).syscall === "mkdir";
    // Go's MkdirAll finds a file where a directory should be: ENOTDIR, where Node says EEXIST.
    const mkdirCause = (cause as NodeJS.ErrnoException).code === "EEXIST" ? { code: "ENOTDIR" } : cause;
    const why = mkdir ? goPathError(mkdirCause, "mkdir", dirname(path)) : goPathError(cause, "listen unix", path);
    throw new Error(`failed to create socket ${JSON.stringify(path)}: ${why}`, { cause: e });
  }
  // Closing stops accepting (connections already made are the plugins', closed with them) and
  // removes the file unless another runtime has replaced it since.
  return { server, close: async () => void server.close() };
}
