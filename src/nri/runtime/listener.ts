import { chmod, lstat, mkdir, mkdtemp, rename, rmdir, unlink } from "node:fs/promises";
import { type Server, type Socket, createServer } from "node:net";
import { dirname, join } from "node:path";
import { goPathError } from "./go-errno.js";

/** A listening unix socket whose file never had a mode wider than asked. */
export interface SafeListener {
  readonly server: Server;
  /** Stops listening and removes the socket file if it is still ours. */
  close(): Promise<void>;
}

/**
 * Listens on `path` as the reference does (any file already there is removed first; the parent
 * directory is created with mode 0700), but binds in a private 0700 directory next to it, sets
 * the mode there and renames the socket into place: nobody can connect before the mode is set.
 * Rejects with the reference's text: `failed to create socket "<path>": ...`.
 */
export async function listenSafely(path: string, mode: number, onConnection: (socket: Socket) => void): Promise<SafeListener> {
  const fail = (why: string, cause: unknown): Error => new Error(`failed to create socket ${JSON.stringify(path)}: ${why}`, { cause });
  // The reference removes whatever is at the path, a stale socket included, ignoring errors.
  await unlink(path).catch(() => rmdir(path).catch(() => undefined));
  const dir = dirname(path);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw fail(goPathError(e, "mkdir", dir), e);
  }
  let privateDir: string;
  try {
    // Short on purpose: a unix socket path has at most 107 bytes.
    privateDir = await mkdtemp(join(dir, ".n"));
  } catch (e) {
    throw fail(goPathError(e, "mkdir", join(dir, ".n")), e);
  }
  const tmp = join(privateDir, "s");
  const server = createServer(onConnection);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(tmp, () => {
        server.off("error", reject);
        resolve();
      });
    });
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (e) {
    server.close();
    await unlink(tmp).catch(() => undefined);
    await rmdir(privateDir).catch(() => undefined);
    throw fail(goPathError(e, "listen unix", path), e);
  }
  await rmdir(privateDir).catch(() => undefined);
  const { ino, dev } = await lstat(path);
  return {
    server,
    async close() {
      // Stop accepting; connections already made are the plugins', closed with them.
      server.close();
      // Remove the file as Go's listener does on close, unless another runtime has replaced it since.
      const now = await lstat(path).catch(() => undefined);
      if (now !== undefined && now.ino === ino && now.dev === dev) await unlink(path).catch(() => undefined);
    },
  };
}
