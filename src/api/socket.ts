import { fstatSync, readlinkSync } from "node:fs";
import { relative } from "node:path";
import { type NetConnectOpts, Socket, connect } from "node:net";
import { currentEngine } from "../internal/engine.js";

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
 * What kind of file `fd` is (`socket`, `a pipe`, ...); throws when it is not open. Deno's fstat
 * refuses an fd the process did not open itself, as an inherited one is: there /proc says.
 */
function fdKind(fd: number): string {
  let st;
  try {
    st = fstatSync(fd);
  } catch (e) {
    const target = currentEngine().name === "deno" ? fdTarget(fd) : undefined;
    if (target === undefined) throw e;
    return target.startsWith("socket:") ? "socket" : target.startsWith("pipe:") ? "a pipe" : target.startsWith("anon_inode:") ? "a file of another kind" : "a file";
  }
  return st.isSocket() ? "socket" : st.isFIFO() ? "a pipe" : st.isFile() ? "a regular file" : st.isCharacterDevice() ? "a character device" : st.isDirectory() ? "a directory" : "a file of another kind";
}

/** What an fd refers to, as /proc names it (`anon_inode:[eventpoll]`), where /proc can tell. */
function fdTarget(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Why an fd named by NRI_PLUGIN_SOCKET is not the runtime's socket, and what to run instead: a
 * process between the runtime and this one (tsx's wrapper, npx) did not pass the fd on, and the
 * number went to something this process opened itself (Node's own event poll, typically).
 */
function notPassedOn(fd: number): string {
  const script = process.argv[1] === undefined ? "plugin.ts" : relative(process.cwd(), process.argv[1]) || process.argv[1];
  // tsx's wrapper (`tsx FILE`, `npx tsx FILE`) runs FILE in a child node preloaded with this file.
  if (process.execArgv.some((a) => /[\\/]tsx[\\/]dist[\\/]preflight\.cjs$/u.test(a))) {
    return `: tsx's wrapper process (tsx ${script}, npx tsx ${script}) started this one without passing fd ${fd} on; run node --import tsx ${script}`;
  }
  return `: the runtime's socket did not reach this process (a wrapper such as npx or a script started it without passing fd ${fd} on); run node itself (node ${script}, or exec node from a script)`;
}

/**
 * The socket a runtime handed a plugin it launched: NRI_PLUGIN_SOCKET names an inherited file
 * descriptor. Undefined when the variable is not set; an error naming the variable and the fd
 * when it does not name an open socket, saying what the fd is instead and, when the socket was
 * not passed on to this process, what to run.
 */
export function inheritedSocket(env: NodeJS.ProcessEnv): Socket | undefined {
  const raw = env.NRI_PLUGIN_SOCKET;
  if (raw === undefined || raw === "") return undefined;
  const fd = Number(raw);
  if (!/^[0-9]+$/u.test(raw) || !Number.isSafeInteger(fd)) throw new RangeError(`nri: invalid NRI_PLUGIN_SOCKET=${JSON.stringify(raw)}: not a file descriptor number`);
  let kind: string;
  try {
    kind = fdKind(fd);
  } catch (e) {
    throw new Error(`nri: invalid NRI_PLUGIN_SOCKET=${raw}: fd ${fd} is not open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})${notPassedOn(fd)}`, { cause: e });
  }
  if (kind !== "socket") {
    const target = fdTarget(fd);
    // An anonymous inode (Node's event poll, an eventfd) is one this process made: the fd was not passed on.
    if (target?.startsWith("anon_inode:") === true) throw new Error(`nri: invalid NRI_PLUGIN_SOCKET=${raw}: fd ${fd} is ${target} (opened by this process itself), not a socket${notPassedOn(fd)}`);
    throw new Error(`nri: invalid NRI_PLUGIN_SOCKET=${raw}: fd ${fd} is ${kind}${target === undefined ? "" : ` (${target})`}, not a socket`);
  }
  try {
    // Bun's Socket constructor takes the fd but never reads it; its connect() adopts it.
    if (currentEngine().name === "bun") return connect({ fd } as unknown as NetConnectOpts);
    return new Socket({ fd, readable: true, writable: true });
  } catch (e) {
    throw new Error(`nri: invalid NRI_PLUGIN_SOCKET=${raw}: fd ${fd}: ${(e as Error).message}`, { cause: e });
  }
}
