import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh directory for sockets (paths stay short: unix socket paths are limited to 108 bytes). */
export function socketDir(): string {
  return mkdtempSync(join(tmpdir(), "nriw-"));
}

/** A socket path in a fresh directory. */
export function socketPath(name = "nri.sock"): string {
  return join(socketDir(), name);
}
