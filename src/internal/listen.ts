import { Buffer } from "node:buffer";
// fs.promises, not node:fs/promises: a bundle then loads that module (and the readline modules
// it brings) when a server listens, not when a plugin starts.
import { promises as fsp, statSync, unlinkSync } from "node:fs";
import { Server as NetServer, type Socket } from "node:net";
import { basename, dirname, join } from "node:path";

/** Options of listenUnix. */
export interface ListenUnixOptions {
  /** Permission bits of the socket file. Default 0o600: only the owner may connect. */
  mode?: number;
}

/** Longest socket path Linux binds: the 108 bytes of sun_path (Node binds them without a NUL). */
const MAX_SOCKET_PATH = 108;

/** A listening unix socket server that removes its socket file when closed, unless replaced since. */
class UnixSocketServer extends NetServer {
  owned: { path: string; dev: number; ino: number } | undefined;

  override close(callback?: (err?: Error) => void): this {
    const o = this.owned;
    this.owned = undefined;
    if (o !== undefined) {
      try {
        const s = statSync(o.path);
        if (s.dev === o.dev && s.ino === o.ino) unlinkSync(o.path);
      } catch {
        // Already gone.
      }
    }
    return super.close(callback);
  }
}

/**
 * Listens on a unix socket at `path` whose file never exists, not even for a moment, with a mode
 * wider than `mode`. A socket file takes the process umask when it is bound, so it is bound in a
 * fresh private (0700) directory beside `path`, where nobody else can reach it, given its mode,
 * and renamed into place. The rename replaces a stale file at `path`, as the reference runtime
 * removes one; missing parent directories are made with mode 0700, as it does too. Resolves with
 * the listening server (its `address()` names the private path it was bound at); closing it
 * removes the socket file unless something else has replaced it since.
 */
export async function listenUnix(path: string, onConnection: (socket: Socket) => void, options: ListenUnixOptions = {}): Promise<NetServer> {
  const mode = options.mode ?? 0o600;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) {
    throw new RangeError(`ttrpc: socket mode ${mode} is not a permission mode from 0 to 0o777`);
  }
  const fail = (reason: string, cause?: unknown): Error =>
    new Error(`ttrpc: cannot listen on ${path}: ${reason}`, cause === undefined ? undefined : { cause });
  const dir = dirname(path);
  if (basename(path) === "") throw fail("no file name");
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 }).catch((e: Error) => {
    throw fail(e.message, e);
  });
  // `${dir}/.` and not join(dir, "."), which would be `dir` itself: the directory goes inside it.
  const hidden = await fsp.mkdtemp(`${dir === "/" ? "" : dir}/.`).catch((e: Error) => {
    throw fail(e.message, e);
  });
  const bound = join(hidden, "s");
  const server = new UnixSocketServer(onConnection);
  try {
    if (Buffer.byteLength(bound) > MAX_SOCKET_PATH) {
      throw fail(`binding beside it needs ${Buffer.byteLength(bound)} bytes of path, more than ${MAX_SOCKET_PATH}`);
    }
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(bound, () => {
        server.off("error", reject);
        resolve();
      });
    });
    await fsp.chmod(bound, mode);
    await fsp.rename(bound, path);
    await fsp.rm(hidden, { recursive: true, force: true });
    const { dev, ino } = await fsp.stat(path);
    server.owned = { path, dev, ino };
    return server;
  } catch (e) {
    server.close();
    await fsp.rm(hidden, { recursive: true, force: true }).catch(() => undefined);
    throw e instanceof Error && e.message.startsWith("ttrpc: cannot listen") ? e : fail((e as Error).message, e);
  }
}
