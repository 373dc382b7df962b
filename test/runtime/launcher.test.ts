import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NriRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import { discoverPlugins, pluginConfig } from "../../src/runtime/launcher.js";
import { LogRecorder, cleanups, runCleanups } from "../support/nri-runtime.js";
import { tempDir } from "../support/temp.js";

afterEach(runCleanups);

const FIXTURE = resolve(import.meta.dirname, "fixtures/launched-plugin.ts");
const TSX = createRequire(import.meta.url).resolve("tsx");
const pod = { id: "pod0" };
const container = { id: "ctr0", podSandboxId: "pod0" };

/** A plugin directory; `plugins` are file names of executables running the fixture. */
function pluginDir(plugins: string[], files: Record<string, { text: string; mode: number }> = {}): string {
  const dir = join(tempDir(), "plugins");
  mkdirSync(dir);
  for (const name of plugins) {
    // The child's environment has no PATH: everything is named by absolute path.
    writeFileSync(join(dir, name), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --import ${JSON.stringify(TSX)} ${JSON.stringify(FIXTURE)}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  for (const [name, f] of Object.entries(files)) {
    writeFileSync(join(dir, name), f.text);
    chmodSync(join(dir, name), f.mode);
  }
  return dir;
}

async function startWith(pluginPath: string, extra: Partial<RuntimeOptions> = {}): Promise<{ runtime: NriRuntime; logs: LogRecorder }> {
  const logs = new LogRecorder();
  const runtime = new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath, pluginConfigPath: join(pluginPath, "../conf.d"), log: logs.log, registrationTimeoutMs: 20_000, requestTimeoutMs: 10_000, ...extra });
  cleanups.push(() => runtime.stop());
  await runtime.start();
  return { runtime, logs };
}

describe("plugin discovery", () => {
  it("takes executables named NN-name in name order, skipping directories and files without an execute bit", async () => {
    const dir = pluginDir([], {
      "20-b": { text: "", mode: 0o700 },
      "10-a": { text: "", mode: 0o755 },
      "30-notexec": { text: "", mode: 0o644 },
      "05-x-y": { text: "", mode: 0o500 },
    });
    mkdirSync(join(dir, "00-dir"));
    const conf = join(dir, "../conf.d");
    mkdirSync(conf);
    writeFileSync(join(conf, "10-a.conf"), "by index and name");
    writeFileSync(join(conf, "a.conf"), "by name only");
    writeFileSync(join(conf, "b.conf"), "b by name");
    expect(await discoverPlugins(dir, conf)).toEqual([
      { idx: "05", base: "x-y", config: "" },
      { idx: "10", base: "a", config: "by index and name" },
      { idx: "20", base: "b", config: "b by name" },
    ]);
  });

  it("a missing plugin directory has no plugins", async () => {
    expect(await discoverPlugins(join(tempDir(), "none"), "/nonexistent")).toEqual([]);
  });

  it.each([
    ["plugin", 'invalid plugin name "plugin", idx-pluginname expected'],
    ["1-short", 'invalid plugin index "1", must be 2 digits'],
    ["ab-letters", 'invalid plugin index "ab" (not [0-9][0-9])'],
  ])("an executable named %j fails the runtime's start: %s", async (name, why) => {
    const dir = pluginDir([], { [name]: { text: "", mode: 0o755 } });
    const rt = new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath: dir });
    await expect(rt.start()).rejects.toThrow(`failed to discover plugins in ${dir}: ${why}`);
  });

  it("an unreadable configuration fails discovery with the reference's text", async () => {
    const conf = join(tempDir(), "conf.d");
    mkdirSync(join(conf, "10-a.conf"), { recursive: true });
    await expect(pluginConfig(conf, "10", "a")).rejects.toThrow(`failed to read configuration for plugin "10-a": read ${join(conf, "10-a.conf")}: is a directory`);
  });
});

describe("launching pre-installed plugins", () => {
  it("gives the plugin fd 3 of a socket pair and exactly NRI_PLUGIN_NAME, NRI_PLUGIN_IDX and NRI_PLUGIN_SOCKET", async () => {
    const dir = pluginDir(["10-echo"]);
    mkdirSync(join(dir, "../conf.d"));
    writeFileSync(join(dir, "../conf.d/echo.conf"), "setting: 1\n");
    const { runtime } = await startWith(dir);
    expect(runtime.plugins.map((p) => [p.id, p.kind])).toEqual([["10-echo", "pre-connected"]]);
    const seen = (await runtime.createContainer({ pod, container })).adjust?.annotations ?? {};
    const env = JSON.parse(seen.env ?? "{}") as Record<string, string>;
    // The shell wrapper and node add nothing we check for beyond these; the runtime passes only these three.
    expect(Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("NRI_") || k === "PATH" || k === "HOME"))).toEqual({
      NRI_PLUGIN_NAME: "echo",
      NRI_PLUGIN_IDX: "10",
      NRI_PLUGIN_SOCKET: "3",
    });
    expect(seen.fd3).toBe("socket");
    expect(seen.pid).toBe(String(runtime.plugins[0]?.pid));
    expect(seen.config).toBe("setting: 1\n");
  }, 60_000);

  it("keeps the name and index of the file, whatever the plugin registers as", async () => {
    const { runtime } = await startWith(pluginDir(["30-claims-other"]));
    expect(runtime.plugins.map((p) => p.id)).toEqual(["30-claims-other"]);
  }, 60_000);

  it("kills a launched plugin with SIGKILL on stop", async () => {
    const { runtime } = await startWith(pluginDir(["10-stubborn"]));
    const info = runtime.plugins[0]!;
    const child = (info as unknown as { child: import("node:child_process").ChildProcess }).child;
    const exit = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_c, s) => r(s)));
    await runtime.stop();
    expect(await exit).toBe("SIGKILL");
  }, 60_000);

  it("never restarts a plugin that exits: it is dropped after the next event", async () => {
    const { runtime, logs } = await startWith(pluginDir(["10-exits", "20-echo"]));
    expect(runtime.plugins.map((p) => p.id)).toEqual(["10-exits", "20-echo"]);
    await runtime.startContainer({ pod, container });
    await logs.waitFor((l) => l === 'info: connection to plugin "10-exits" closed');
    await runtime.startContainer({ pod, container });
    expect(runtime.plugins.map((p) => p.id)).toEqual(["20-echo"]);
  }, 60_000);

  it("skips, with the reference's warning, a plugin that cannot be started", async () => {
    const dir = pluginDir(["30-echo"], {
      "15-noexec": { text: "exit 0\n", mode: 0o755 },
      "20-wasm": { text: "\0asm\x01\0\0\0", mode: 0o755 },
    });
    // A dangling symbolic link has every mode bit, so it is taken for an executable.
    symlinkSync(join(dir, "missing"), join(dir, "10-dangling"));
    const { runtime, logs } = await startWith(dir);
    expect(runtime.plugins.map((p) => p.id)).toEqual(["30-echo"]);
    expect(logs.at("warn")).toEqual([
      `failed to initialize pre-installed NRI plugin "dangling": failed to launch plugin "10-dangling": fork/exec ${join(dir, "10-dangling")}: no such file or directory`,
      // A file without an interpreter line runs under /bin/sh (execvp), where Go's execve says "exec format error".
      'failed to start pre-installed NRI plugin "noexec": failed to register plugin, connection closed',
      `failed to initialize pre-installed NRI plugin "wasm": can't load WASM plugin ${join(dir, "20-wasm")}: no WASM support`,
    ]);
  }, 60_000);

  it("skips, with the reference's warning, a plugin that never registers", async () => {
    // It never registers, so the timeout fires whatever its length and however slow the machine.
    const { runtime, logs } = await startWith(pluginDir(["40-silent"]), { registrationTimeoutMs: 100 });
    expect(runtime.plugins).toEqual([]);
    expect(logs.at("warn")).toEqual(['failed to start pre-installed NRI plugin "silent": plugin registration timed out']);
  }, 60_000);
});
