import { readFileSync } from "node:fs";

/** What the kernel says of a process's confinement (/proc/PID/status). */
export interface Confinement {
  /** 0 none, 1 strict, 2 a filter (a seccomp profile). */
  readonly seccomp: string;
  /** 1 when it cannot gain privileges (no_new_privs). */
  readonly noNewPrivs: string;
  /** Its effective capabilities, hexadecimal. */
  readonly capEff: string;
}

/** The confinement of process `pid`. */
export function confinement(pid: number): Confinement {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(status)?.[1] ?? "";
  return { seccomp: field("Seccomp"), noNewPrivs: field("NoNewPrivs"), capEff: field("CapEff") };
}
