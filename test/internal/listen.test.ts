import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listenUnix } from "../../src/internal/listen.js";
import { tempDir } from "../support/temp.js";

/**
 * Another process stats every entry of `dir` in a tight loop and reports each distinct
 * (name, type, mode) it sees: a socket bound in place and chmod-ed afterwards is caught with
 * its umask mode, which a watcher in this process (its events arrive late) would miss.
 */
async function watchModes(dir: string): Promise<{ stop(): Promise<Map<string, Set<string>>> }> {
  const script = `
    const fs = require("fs"); const path = require("path"); const seen = new Set();
    process.stdout.write("ready\\n");
    for (;;) {
      let names = [];
      try { names = fs.readdirSync(process.argv[1]); } catch {}
      // The scan that finds "stop" still records what is there: a starved watcher sees at least that.
      for (const n of names) {
        try {
          const st = fs.lstatSync(path.join(process.argv[1], n));
          const key = n + " " + (st.isSocket() ? "socket" : st.isDirectory() ? "dir" : "file") + " " + (st.mode & 0o777).toString(8);
          if (!seen.has(key)) { seen.add(key); process.stdout.write(key + "\\n"); }
          if (st.isDirectory()) for (const m of fs.readdirSync(path.join(process.argv[1], n))) {
            const sub = fs.lstatSync(path.join(process.argv[1], n, m));
            const k2 = n + "/" + m + " " + (sub.isSocket() ? "socket" : "file") + " " + (sub.mode & 0o777).toString(8);
            if (!seen.has(k2)) { seen.add(k2); process.stdout.write(k2 + "\\n"); }
          }
        } catch {}
      }
      if (names.includes("stop")) break;
    }`;
  const child = spawn(process.execPath, ["-e", script, dir], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8");
  await new Promise<void>((resolve) => {
    child.stdout.on("data", (c: string) => {
      out += c;
      if (out.startsWith("ready\n")) resolve();
    });
  });
  return {
    async stop() {
      writeFileSync(join(dir, "stop"), "");
      // 'close', not 'exit': the last of its output may be unread when it exits.
      await once(child, "close");
      rmSync(join(dir, "stop"));
      const seen = new Map<string, Set<string>>();
      for (const line of out.split("\n").slice(1)) {
        if (line === "" || line.startsWith("stop ")) continue;
        const [name, type, mode] = line.split(" ");
        if (!seen.has(name!)) seen.set(name!, new Set());
        seen.get(name!)!.add(`${type} ${mode}`);
      }
      return seen;
    },
  };
}

const dir = (): string => tempDir("nriw-l-");
const mode = (p: string): number => statSync(p).mode & 0o777;

function connectable(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    s.once("connect", () => {
      s.destroy();
      resolve();
    });
    s.once("error", reject);
  });
}

describe("listenUnix", () => {
  let umask = 0;
  beforeEach(() => {
    // With umask 0 a socket bound in place would be created 0777: the worst case to guard against.
    umask = process.umask(0);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it("never shows the socket, or anything beside it, with a mode wider than asked, even with umask 0", async () => {
    const d = dir();
    const watcher = await watchModes(d);
    // The control: a socket bound in place takes the umask, and the watcher sees it.
    const naive = createServer();
    await new Promise<void>((resolve) => naive.listen(join(d, "naive.sock"), resolve));
    const server = await listenUnix(join(d, "nri.sock"), (s) => s.destroy());
    const seen = await watcher.stop();
    naive.close(); // removes its socket file
    expect(seen.get("naive.sock")).toEqual(new Set(["socket 777"]));
    expect(seen.get("nri.sock")).toEqual(new Set(["socket 600"]));
    // Whatever else appeared beside it (the private directory, if the watcher caught it) was 0700;
    // what is inside that directory (the socket before its chmod) nobody else can reach.
    for (const [name, modes] of seen) {
      if (!name.endsWith(".sock") && !name.includes("/")) expect([name, modes]).toEqual([name, new Set(["dir 700"])]);
    }
    expect(readdirSync(d)).toEqual(["nri.sock"]);
    await connectable(join(d, "nri.sock"));
    server.close();
    expect(readdirSync(d)).toEqual([]);
  });

  it("takes another mode, replaces a stale socket or file as the reference runtime does, and makes missing parents 0700", async () => {
    const d = dir();
    const path = join(d, "run", "nri", "nri.sock");
    const first = await listenUnix(path, (s) => s.destroy(), { mode: 0o660 });
    expect(mode(path)).toBe(0o660);
    expect(mode(join(d, "run"))).toBe(0o700);
    expect(mode(join(d, "run", "nri"))).toBe(0o700);
    // A crashed runtime leaves its socket file behind: simulated by a second listener on the path.
    const second = await listenUnix(path, (s) => s.destroy());
    expect(mode(path)).toBe(0o600);
    await connectable(path);
    // The first server's close must not remove the socket that replaced its own.
    first.close();
    await connectable(path);
    second.close();
    writeFileSync(path, "stale");
    const third = await listenUnix(path, (s) => s.destroy());
    expect(statSync(path).isSocket()).toBe(true);
    third.close();
  });

  it("names the path in its errors and leaves nothing behind", async () => {
    const d = dir();
    mkdirSync(join(d, "taken.sock"));
    writeFileSync(join(d, "taken.sock", "x"), "");
    await expect(listenUnix(join(d, "taken.sock"), (s) => s.destroy())).rejects.toThrow(
      `ttrpc: cannot listen on ${join(d, "taken.sock")}: EISDIR: illegal operation on a directory, rename`,
    );
    expect(readdirSync(d)).toEqual(["taken.sock"]);
    // A 106-byte path fits a socket address; the private directory beside it (3 bytes more) does
    // not. The path is built on a base of fixed length under /tmp: a long TMPDIR leaves no room.
    const base = mkdtempSync("/tmp/nriw-l-");
    try {
      const deep = join(base, "y".repeat(98 - base.length));
      const long = join(deep, "s.sock");
      expect(Buffer.byteLength(long)).toBe(106);
      await expect(listenUnix(long, (s) => s.destroy())).rejects.toThrow(`ttrpc: cannot listen on ${long}: binding beside it needs 109 bytes of path, more than 108`);
      expect(readdirSync(deep)).toEqual([]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
    await expect(listenUnix(join(d, "a.sock"), (s) => s.destroy(), { mode: 0o1000 })).rejects.toThrow("ttrpc: socket mode 512 is not a permission mode from 0 to 0o777");
  });
});
