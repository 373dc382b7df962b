import { fstatSync } from "node:fs";
import { Socket, connect } from "node:net";

/** Listens on a unix socket never wider than its mode (0600 by default); see the ttrpc layer. */
export { type ListenUnixOptions, listenUnix } from "../internal/listen.js";

/** Where plugins find the runtime unless told otherwise. */
export const DEFAULT_SOCKET_PATH = "/var/run/nri/nri.sock";

/**
 * The runtime's busy-polling window (see internal/busy-poll.ts), in microseconds: after a
 * request, a runtime waits for that plugin's answer. An endpoint polls only in a sustained run of
 * messages back to back, so events spaced as a node spaces them never poll (polling there made
 * cycles slower: docs/bench), and events back to back do.
 */
export const RUNTIME_BUSY_POLL_MICROS = 250;

/**
 * A plugin's busy-polling window, in microseconds: after an answer, a plugin waits for the
 * runtime's next request, which follows within the runtime's own turnaround (under 50 µs on the
 * bench machine) when the runtime serves this plugin alone, and only after the other plugins'
 * round trips when it serves several (115–170 µs with three). Polling through those would take
 * the CPU the working plugin needs; 100 µs covers the first and not the second
 * (docs/performance.md, "Busy polling").
 */
export const PLUGIN_BUSY_POLL_MICROS = 100;

/**
 * Connects to a unix socket; rejects with an error naming the path, after `what` (default
 * `nri: cannot connect to`). `allowHalfOpen` keeps the write side open after the peer ends its own.
 */
export function connectUnix(path: string, o: { allowHalfOpen?: boolean; what?: string } = {}): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ path, allowHalfOpen: o.allowHalfOpen ?? false });
    const onError = (e: Error): void => reject(new Error(`${o.what ?? "nri: cannot connect to"} ${path}: ${e.message}`, { cause: e }));
    s.once("error", onError);
    s.once("connect", () => {
      s.off("error", onError);
      resolve(s);
    });
  });
}

/**
 * The socket a runtime handed a plugin it launched: NRI_PLUGIN_SOCKET names an inherited file
 * descriptor. Undefined when the variable is not set; an error naming the variable and the fd
 * when it does not name an open socket.
 */
export function inheritedSocket(env: NodeJS.ProcessEnv): Socket | undefined {
  const raw = env.NRI_PLUGIN_SOCKET;
  if (raw === undefined || raw === "") return undefined;
  const fd = Number(raw);
  if (!/^[0-9]+$/u.test(raw) || !Number.isSafeInteger(fd)) throw new RangeError(`nri: invalid NRI_PLUGIN_SOCKET=${JSON.stringify(raw)}: not a file descriptor number`);
  let kind: string;
  try {
    const st = fstatSync(fd);
    kind = st.isSocket() ? "socket" : st.isFIFO() ? "pipe" : st.isFile() ? "regular file" : st.isCharacterDevice() ? "character device" : st.isDirectory() ? "directory" : "file of another kind";
  } catch (e) {
    throw new Error(`nri: invalid NRI_PLUGIN_SOCKET=${raw}: fd ${fd} is not open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { cause: e });
  }
  if (kind !== "socket") throw new Error(`nri: invalid NRI_PLUGIN_SOCKET=${raw}: fd ${fd} is a ${kind}, not a socket`);
  try {
    return new Socket({ fd, readable: true, writable: true });
  } catch (e) {
    throw new Error(`nri: invalid NRI_PLUGIN_SOCKET=${raw}: fd ${fd}: ${(e as Error).message}`, { cause: e });
  }
}
