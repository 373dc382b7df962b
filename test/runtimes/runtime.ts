import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Dialect } from "../../src/testing/index.js";
import type { PluginUnderTest } from "./plugins.js";
import { ROOT } from "./support.js";

/** The NRI timeouts every runtime is configured with, and test-plugin plays them with. */
export const NRI_TIMEOUTS = { registrationS: 10, requestS: 5 } as const;

/**
 * Where a runtime's NRI socket is, relative to its private directory: in a directory of its own,
 * which a plugin's pod mounts (it survives the runtime's restarts; the plugin directory does not).
 */
export const NRI_SOCKET = "nri-socket/nri.sock";

/** Installs pre-installed plugins itself: given the runtime's plugin and plugin config directories. */
export type Installer = (pluginDir: string, configDir: string) => void;

/** A runtime started for one run, with a private config, state and log. */
export interface RunningRuntime {
  /** unix:///path of its CRI socket. */
  readonly endpoint: string;
  /** Its NRI socket, for plugins that connect themselves. */
  readonly nriSocket: string;
  /** Its log file. */
  readonly log: string;
  /** Deprecation IDs the runtime lists (containerd: `ctr deprecations list`). */
  deprecations(): Promise<string[]>;
  /** Stops it by its PID and waits for it to exit. */
  stop(): Promise<void>;
}

/** Where a runtime keeps its state (removed after the suite) and its logs (kept). */
export interface Place {
  readonly dir: string;
  readonly logs: string;
  /** `host:port` of a registry speaking plain HTTP that the runtime may pull from. */
  readonly registry?: string;
  /** The NRI registration timeout, seconds; default NRI_TIMEOUTS.registrationS (longer for an emulated plugin). */
  readonly registrationS?: number;
}

/** A runtime the suite drives, and what it does with NRI that the checks must know. */
export interface RuntimeUnderTest {
  readonly name: string;
  /** What `Configure` carries as runtime name and NRI version. */
  readonly configure: { readonly runtime: string; readonly nriVersion: string };
  /** The lifecycle events the runtime sends a plugin, in order, for one pod and container. */
  events(p: PluginUnderTest): string[];
  /** The events it sends a StateChange-only plugin through StateChange and warns about (containerd). */
  deprecationWarnings(p: PluginUnderTest): string[];
  /** The lifecycle events it sends the plugin as StateChange, in order (the rest as dedicated calls). */
  viaStateChange(p: PluginUnderTest): string[];
  /** The dedicated calls the plugin refuses with UNIMPLEMENTED before the runtime turns to StateChange. */
  refusedCalls(p: PluginUnderTest): string[];
  /** The `nri-wire test-plugin` dialect that plays a runtime of its NRI era. */
  readonly dialect: Dialect;
  /** The log message with which the runtime refuses the plugin, when it does (else undefined). */
  refusal(p: PluginUnderTest): string | undefined;
  /** Paths outside its directory that the runtime creates; the suite removes those it made. */
  readonly hostPaths: readonly string[];
  /**
   * Starts the runtime for run number `n`, its state in `at.dir` and its log in `at.logs`; with
   * `preinstalled` the plugin sits in its plugin directory (through installPlugin's launcher, or
   * put there by an Installer).
   */
  start(at: Place, n: number, preinstalled?: PluginUnderTest | Installer): Promise<RunningRuntime>;
}

/**
 * Installs `p` as a pre-installed plugin in `pluginDir`: a launcher named `<idx>-<name>` that
 * records its PID (so the suite can stop it if the runtime does not), then execs the plugin with
 * its output in `files` (runtimes give a launched plugin no stdout and an environment of three
 * NRI_PLUGIN_* variables, so the node binary is named by absolute path).
 */
export function installPlugin(pluginDir: string, p: PluginUnderTest, files: { out: string; err: string; pid: string }): void {
  mkdirSync(pluginDir, { recursive: true });
  const file = join(pluginDir, `${p.idx}-${p.name}`);
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  writeFileSync(file, `#!/bin/sh\necho $$ > ${q(files.pid)}\ncd ${q(ROOT)} || exit 1\nexec ${p.argv.map(q).join(" ")} >${q(files.out)} 2>${q(files.err)}\n`);
  chmodSync(file, 0o755);
}

/** Where the plugin of run `n` writes its output and (when a runtime launches it) its PID. */
export function pluginFiles(logs: string, n: number): { out: string; err: string; pid: string } {
  return { out: join(logs, `plugin-${n}.out`), err: join(logs, `plugin-${n}.err`), pid: join(logs, `plugin-${n}.pid`) };
}
