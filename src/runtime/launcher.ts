import { type ChildProcess, spawn } from "node:child_process";
import { open, readFile, readdir, lstat } from "node:fs/promises";
import type { Socket } from "node:net";
import { join } from "node:path";
import { goPathError } from "./go/errno.js";
import { goQuote } from "../internal/go-quote.js";
import { parsePluginFileName } from "../api/identity.js";

/** A pre-installed plugin found in the plugin directory. */
export interface DiscoveredPlugin {
  readonly idx: string;
  readonly base: string;
  /** Its configuration text, `""` when it has none. */
  readonly config: string;
}

/**
 * The pre-installed plugins: every entry of `pluginPath` that is not a directory and has an
 * execute bit, in name order, named `NN-base`. A missing directory has none; a badly named
 * executable or an unreadable configuration fails the whole discovery, as in the reference.
 */
export async function discoverPlugins(pluginPath: string, configPath: string): Promise<DiscoveredPlugin[]> {
  const fail = (why: string): Error => new Error(`failed to discover plugins in ${pluginPath}: ${why}`);
  let entries;
  try {
    entries = await readdir(pluginPath, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw fail(goPathError(e, "open", pluginPath));
  }
  // Go's ReadDir returns entries sorted by name, as bytes.
  entries.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  const found: DiscoveredPlugin[] = [];
  for (const e of entries) {
    if (e.isDirectory()) continue;
    let mode: number;
    try {
      mode = (await lstat(join(pluginPath, e.name))).mode;
    } catch {
      continue;
    }
    if ((mode & 0o111) === 0) continue;
    let parsed;
    try {
      parsed = parsePluginFileName(e.name);
    } catch (err) {
      throw fail((err as Error).message);
    }
    const config = await pluginConfig(configPath, parsed.idx, parsed.base).catch((err: Error) => {
      throw fail(err.message);
    });
    found.push({ ...parsed, config });
  }
  return found;
}

/** A plugin's configuration: `<dir>/NN-base.conf`, else `<dir>/base.conf`, else none. */
export async function pluginConfig(configPath: string, idx: string, base: string): Promise<string> {
  const name = `${idx}-${base}`;
  for (const path of [join(configPath, `${name}.conf`), join(configPath, `${base}.conf`)]) {
    try {
      return await readFile(path, "utf8");
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") continue;
      // Reading a directory fails at read, not open, in Go.
      throw new Error(`failed to read configuration for plugin ${goQuote(name)}: ${goPathError(e, code === "EISDIR" ? "read" : "open", path)}`);
    }
  }
  return "";
}

/** The first bytes of a WebAssembly module, version 1: `\0asm` 1 0 0 0. */
const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/** Whether the file is a WebAssembly module, which the reference loads in-process instead. */
export async function isWasm(path: string): Promise<boolean> {
  try {
    const f = await open(path, "r");
    try {
      const buf = Buffer.alloc(WASM_MAGIC.length);
      const { bytesRead } = await f.read(buf, 0, buf.length, 0);
      return bytesRead === buf.length && WASM_MAGIC.every((b, i) => buf[i] === b);
    } finally {
      await f.close();
    }
  } catch {
    return false;
  }
}

/** A launched plugin: its process and the runtime's end of the socket pair. */
export interface LaunchedPlugin {
  readonly child: ChildProcess;
  readonly socket: Socket;
}

/**
 * Starts `<dir>/NN-base` with one end of a socket pair as its fd 3 and an environment of exactly
 * NRI_PLUGIN_NAME, NRI_PLUGIN_IDX and NRI_PLUGIN_SOCKET=3; its stdin, stdout and stderr are
 * /dev/null, as in the reference. Rejects with the reference's text if it cannot start.
 */
export async function launchPlugin(dir: string, idx: string, base: string): Promise<LaunchedPlugin> {
  const name = `${idx}-${base}`;
  const path = join(dir, name);
  if (await isWasm(path)) throw new Error(`can't load WASM plugin ${path}: no WASM support`);
  // Node makes a "pipe" stdio entry a unix socketpair, which is what NRI's fd 3 is.
  const child = spawn(path, [], {
    stdio: ["ignore", "ignore", "ignore", "pipe"],
    env: { NRI_PLUGIN_NAME: base, NRI_PLUGIN_IDX: idx, NRI_PLUGIN_SOCKET: "3" },
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (e) => reject(new Error(`failed to launch plugin ${goQuote(name)}: ${goPathError(e, "fork/exec", path)}`, { cause: e })));
  });
  // Later errors (a failed kill) are the process's business, not a crash of the runtime.
  child.on("error", () => undefined);
  return { child, socket: child.stdio[3] as Socket };
}
