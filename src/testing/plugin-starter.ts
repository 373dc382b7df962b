import { type ChildProcess, spawn } from "node:child_process";
import { unlink } from "node:fs/promises";
import { type Server, type Socket, createServer } from "node:net";
import type { Duplex } from "node:stream";

/** One running instance of the plugin under test, as the runner sees it. */
export interface PluginInstance {
  /** The runtime's end of the plugin's connection. */
  readonly socket: Duplex;
  /** Settles with a description once the plugin is gone: `exited with code 1`, `closed its connection`. */
  readonly gone: Promise<string>;
  /**
   * Whether a runtime restart must end it and the runner starts a new one, as a runtime does with
   * a plugin it launched (fd 3). False for a plugin on a socket: it reconnects by itself, or
   * exits and is started again as systemd or a DaemonSet would.
   */
  readonly restartable: boolean;
  /** Stops it if the runner started it (SIGKILL, as a runtime stops a plugin it launched). */
  kill(): void;
  /** The end of what it wrote to stderr, if the runner started it. */
  stderr?(): string;
}

/** Starts the plugin under test, once per dialect and again after a runtime restart. */
export interface PluginStarter {
  /** How the plugin is started, for the report. */
  readonly description: string;
  /** The name and index the plugin is expected to register with, when the runner gave them. */
  readonly expected?: { name?: string; idx?: string };
  /** Starts an instance and resolves with its connection; rejects after `timeoutMs`. */
  start(timeoutMs: number): Promise<PluginInstance>;
  /** Releases what the starter holds (a listening socket). */
  close(): Promise<void>;
}

/** How much of a plugin's stderr the runner keeps for the report. */
const STDERR_TAIL = 4000;

/** The end of a process's stderr, kept for the report of a failed check; stdout is drained. */
function stderrTail(child: ChildProcess): () => string {
  let out = "";
  child.stdout?.resume();
  child.stderr?.on("data", (d: Buffer) => {
    out = (out + d.toString()).slice(-STDERR_TAIL);
  });
  return () => out;
}

function exitText(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    child.once("error", (e) => resolve(`could not start: ${e.message}`));
    child.once("exit", (code, signal) => resolve(signal !== null ? `was killed by ${signal}` : `exited with code ${code}`));
  });
}

/**
 * Starts `command` the way a runtime starts a pre-installed plugin: one end of a socket pair as
 * fd 3 and NRI_PLUGIN_NAME, NRI_PLUGIN_IDX and NRI_PLUGIN_SOCKET=3 set. The rest of the runner's
 * environment is passed on too (the reference passes only those three, but a command such as
 * `node plugin.js` needs PATH to be found at all).
 */
export function launchStarter(command: readonly string[], name: string, idx: string, env: NodeJS.ProcessEnv = process.env): PluginStarter {
  const [file, ...args] = command;
  if (file === undefined) throw new Error("test-plugin: no plugin command given");
  const live = new Set<ChildProcess>();
  return {
    description: `launched as ${idx}-${name} with the connection on fd 3: ${command.join(" ")}`,
    expected: { name, idx },
    async start(): Promise<PluginInstance> {
      const child = spawn(file, args, {
        stdio: ["ignore", "pipe", "pipe", "pipe"],
        env: { ...env, NRI_PLUGIN_NAME: name, NRI_PLUGIN_IDX: idx, NRI_PLUGIN_SOCKET: "3" },
      });
      live.add(child);
      const stderr = stderrTail(child);
      const gone = exitText(child);
      void gone.then(() => live.delete(child));
      return { socket: child.stdio[3] as Socket, gone, restartable: true, kill: () => void child.kill("SIGKILL"), stderr };
    },
    async close(): Promise<void> {
      for (const c of live) c.kill("SIGKILL");
    },
  };
}

/**
 * Listens on `path` and waits for the plugin to connect; with a `command`, starts it first (its
 * arguments should point it at `path`). The plugin is an external one: after a runtime restart
 * the same process is waited for to reconnect, and started again only if it exited, as its
 * supervisor would. Without a command, the plugin is started by other means and must connect
 * (and, after a runtime restart, reconnect) by itself.
 */
export function socketStarter(path: string, command: readonly string[] | undefined, expected?: { name?: string; idx?: string }): PluginStarter {
  let server: Server | undefined;
  const waiting: ((s: Socket) => void)[] = [];
  const early: Socket[] = [];
  const live = new Set<ChildProcess>();
  /** The running process, while it runs. */
  let current: { child: ChildProcess; exited: Promise<string>; stderr: () => string } | undefined;
  const listen = async (): Promise<Server> => {
    if (server !== undefined) return server;
    await unlink(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "ENOENT") throw e;
    });
    const s = createServer((conn) => {
      const w = waiting.shift();
      if (w !== undefined) w(conn);
      else early.push(conn);
    });
    await new Promise<void>((resolve, reject) => {
      s.once("error", reject);
      s.listen(path, () => resolve());
    });
    server = s;
    return s;
  };
  const spawnPlugin = (): NonNullable<typeof current> => {
    const [file, ...args] = command!;
    const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe"] });
    live.add(child);
    const exited = exitText(child);
    const proc = { child, exited, stderr: stderrTail(child) };
    current = proc;
    void exited.then(() => {
      live.delete(child);
      if (current === proc) current = undefined;
    });
    return proc;
  };
  return {
    description: command === undefined ? `connecting to ${path} by itself` : `connecting to ${path}: ${command.join(" ")}`,
    ...(expected === undefined ? {} : { expected }),
    async start(timeoutMs: number): Promise<PluginInstance> {
      await listen();
      // A process still running reconnects by itself; one that is gone is started again, and so
      // is one that exits instead of reconnecting.
      const reconnecting = current;
      let proc = command === undefined ? undefined : (current ?? spawnPlugin());
      let timer: NodeJS.Timeout | undefined;
      const socket = await new Promise<Socket>((resolve, reject) => {
        const now = early.shift();
        if (now !== undefined) return resolve(now);
        // Only a waiter still waiting may give up: an index of -1 would remove another's.
        const giveUp = (e: Error): void => {
          const i = waiting.indexOf(resolve);
          if (i < 0) return;
          waiting.splice(i, 1);
          reject(e);
        };
        const watch = (p: NonNullable<typeof current>): void =>
          void p.exited.then((why) => {
            if (p !== reconnecting || !waiting.includes(resolve)) return giveUp(new Error(`plugin ${why} before connecting`));
            proc = spawnPlugin();
            watch(proc);
          });
        waiting.push(resolve);
        timer = setTimeout(() => giveUp(new Error(`no plugin connected to ${path} within ${timeoutMs} ms`)), timeoutMs);
        if (proc !== undefined) watch(proc);
      }).finally(() => clearTimeout(timer));
      const closed = new Promise<string>((r) => socket.once("close", () => r("closed its connection")));
      const started = proc;
      return {
        socket,
        gone: started?.exited ?? closed,
        restartable: false,
        kill: () => {
          started?.child.kill("SIGKILL");
        },
        ...(started === undefined ? {} : { stderr: started.stderr }),
      };
    },
    async close(): Promise<void> {
      for (const c of live) c.kill("SIGKILL");
      await new Promise<void>((r) => (server === undefined ? r() : server.close(() => r())));
      for (const s of early) s.destroy();
    },
  };
}
