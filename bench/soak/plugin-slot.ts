/**
 * One supervised plugin process of the soak: started, watched until it says it is registered,
 * killed with SIGKILL when the chaos schedule says so, and started again. Its stderr is appended
 * to a log file (the file is opened only for the spawn, so the soak holds no descriptor for it);
 * its stdout is read for the readiness line.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";

/** What a slot runs. */
export interface SlotSpec {
  /** `NN-name`, as the runtime lists the plugin. */
  readonly id: string;
  readonly command: readonly [string, readonly string[]];
  /** Whether a stdout line says the plugin is registered, configured and synchronized. */
  readonly isReady: (line: string) => boolean;
  /** Where the processes' stderr goes, appended. */
  readonly logPath: string;
  /** The directory the processes run in. */
  readonly cwd: string;
}

/** `down`: no process; `starting`: spawned, not yet ready; `ready`: said it is synchronized. */
export type SlotState = "down" | "starting" | "ready";

/** How one process of a slot ended. */
export interface SlotExit {
  readonly pid: number | undefined;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Whether the soak killed it. */
  readonly killed: boolean;
}

export class PluginSlot {
  state: SlotState = "down";
  /** When the current process was spawned and when it said it was ready (ms, performance.now). */
  startedAt = 0;
  readyAt = 0;
  /** Whether the runtime has listed the current process's plugin as open since it was ready. */
  confirmed = false;
  spawns = 0;
  kills = 0;
  /** Kills that hit a process before the runtime listed it (start-up, registration, synchronization). */
  killsBeforeRegistered = 0;
  private child: ChildProcess | undefined;
  private killing = false;
  private exitedPromise: Promise<void> = Promise.resolve();

  /** `onExit` is called once per process, after its stdio has closed. */
  constructor(
    readonly spec: SlotSpec,
    private readonly onExit: (slot: PluginSlot, exit: SlotExit) => void,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether the current process has been sent SIGKILL (it may not have exited yet). */
  get dying(): boolean {
    return this.killing;
  }

  /** Resolves once the current process (if any) has exited and its pipes are closed. */
  get exited(): Promise<void> {
    return this.exitedPromise;
  }

  /** Spawns a process; the slot must be down. */
  start(): void {
    if (this.state !== "down") throw new Error(`soak: plugin ${this.spec.id} started while ${this.state}`);
    const fd = openSync(this.spec.logPath, "a");
    let child: ChildProcess;
    try {
      child = spawn(this.spec.command[0], this.spec.command[1], { stdio: ["ignore", "pipe", fd], cwd: this.spec.cwd });
    } finally {
      closeSync(fd);
    }
    this.child = child;
    this.killing = false;
    this.state = "starting";
    this.confirmed = false;
    this.startedAt = performance.now();
    this.spawns++;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (this.child === child && this.state === "starting" && this.spec.isReady(line)) {
        this.state = "ready";
        this.readyAt = performance.now();
      }
    });
    this.exitedPromise = new Promise((resolve) => {
      let done = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (done) return;
        done = true;
        const killed = this.killing;
        if (this.child === child) {
          this.child = undefined;
          this.state = "down";
        }
        this.onExit(this, { pid: child.pid, code, signal, killed });
        resolve();
      };
      child.on("close", finish);
      child.on("error", () => finish(null, null));
    });
  }

  /** SIGKILLs the current process: one kill of the chaos schedule. */
  kill(): void {
    if (this.child === undefined) return;
    this.kills++;
    if (!this.confirmed) this.killsBeforeRegistered++;
    this.terminate();
  }

  /** SIGKILLs the current process without counting it (the end of a run). */
  terminate(): void {
    if (this.child === undefined) return;
    this.killing = true;
    this.child.kill("SIGKILL");
  }

  /** The last `lines` lines of the slot's stderr log. */
  logTail(lines = 20): string {
    try {
      return readFileSync(this.spec.logPath, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  }
}
