import { accessSync, constants, statSync } from "node:fs";

/**
 * Why a plugin cannot use the runtime's NRI socket at `path`, or undefined when it can try:
 * missing (the runtime is not running, NRI is disabled, or the directory is not mounted), not a
 * socket, or not writable (connecting to a unix socket needs write permission).
 */
export function socketProblem(path: string): string | undefined {
  let isSocket: boolean;
  try {
    isSocket = statSync(path).isSocket();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return `socket ${path}: missing (is NRI enabled in the runtime, and its socket directory mounted?)`;
    return `socket ${path}: ${code ?? (e as Error).message}`;
  }
  if (!isSocket) return `socket ${path}: not a socket`;
  try {
    accessSync(path, constants.W_OK);
  } catch (e) {
    return `socket ${path}: not writable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  return undefined;
}
