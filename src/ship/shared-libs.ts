/**
 * The shared libraries an ELF executable needs at run time and the loader that maps them, as
 * the host's `ldd` resolves them: what an image without a base image must carry.
 */
import { execFile } from "node:child_process";

/** Parses `ldd` output into absolute library paths (the loader included), in ldd's order. */
export function parseLdd(output: string): string[] {
  const paths: string[] = [];
  for (const raw of output.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("linux-vdso") || line.startsWith("linux-gate")) continue;
    if (line.includes("=> not found")) throw new Error(`shared library ${line.split(" ")[0]!}: not found on this host`);
    const arrow = /=>\s+(\/\S+)/.exec(line);
    const direct = /^(\/\S+)\s/.exec(line);
    const p = arrow?.[1] ?? direct?.[1];
    if (p !== undefined && !paths.includes(p)) paths.push(p);
  }
  return paths;
}

/** The shared libraries and loader `file` needs; none for a static executable. */
export function sharedLibraries(file: string): Promise<string[]> {
  return new Promise((res, rej) => {
    execFile("ldd", [file], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const text = `${stdout}${stderr}`;
      if (/not a dynamic executable|statically linked/.test(text)) return res([]);
      if (err !== null) return rej(new Error(`ldd ${file}: ${stderr.trim() || err.message}`, { cause: err }));
      try {
        res(parseLdd(stdout));
      } catch (e) {
        rej(new Error(`ldd ${file}: ${(e as Error).message}`, { cause: e }));
      }
    });
  });
}
