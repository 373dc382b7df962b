import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

/**
 * `--node PATH`: a bench driver runs on that node binary by running itself again there (with the
 * other arguments, from `cwd`); this process then exits with its status. Returns without doing
 * anything when no other node is asked for.
 */
export function runOnAskedNode(argv: readonly string[], script: string, cwd: string): void {
  const i = argv.indexOf("--node");
  const node = i < 0 ? undefined : argv[i + 1];
  if (node === undefined || resolve(node) === process.execPath) return;
  const rest = argv.filter((a, j) => a !== "--node" && argv[j - 1] !== "--node");
  const r = spawnSync(resolve(node), ["--import", "tsx", script, ...rest], { stdio: "inherit", cwd });
  process.exit(r.status ?? 1);
}
