import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * `nri-wire build ENTRY --name NAME --idx 10 --out OUT [args]` as a user runs it, from `cwd`,
 * with its own download cache (default `OUT/../cache-NAME`, so that nothing one build made, a
 * compressed layer, serves another); resolves with its output lines. `repo` is the checkout of
 * nri-wire that builds (default this one).
 */
export function runBuild(o: { cwd: string; entry: string; name: string; out: string; args?: readonly string[]; cache?: string; env?: NodeJS.ProcessEnv; repo?: string }): Promise<string[]> {
  const repo = o.repo ?? ROOT;
  const args = ["--import", join(repo, "node_modules/tsx/dist/esm/index.mjs"), join(repo, "src/cli/main.ts"), "build", o.entry, "--name", o.name, "--idx", "10", "--out", o.out, ...(o.args ?? [])];
  const env = { ...process.env, XDG_CACHE_HOME: o.cache ?? join(o.out, "..", `cache-${o.name}`), ...o.env };
  return new Promise((res, rej) => {
    execFile(process.execPath, args, { cwd: o.cwd, env, timeout: 300_000 }, (err, stdout, stderr) => {
      if (err !== null) rej(new Error(`build failed: ${stderr}`));
      else res(stdout.trim().split("\n"));
    });
  });
}

/** The files under `out`, relative to it, sorted. */
export function filesUnder(out: string): string[] {
  return readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(out.length + 1))
    .sort();
}
