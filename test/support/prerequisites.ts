import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { platform } from "node:os";

/**
 * What a suite needs from the machine, checked in one place. A suite whose needs are met runs;
 * otherwise it is skipped with one notice naming what was skipped and what is missing, and under
 * `CI=true` it fails instead, with the same reason: a CI run that skips a suite is not green.
 * Two absences are deliberate and skip with the notice even under CI=true: `NRI_WIRE_GO=0` (set
 * by `npm run test:unit`), and a Node line that cannot do what a suite tests (CI runs every line).
 */

/** One thing a suite needs: what it is, and why it is missing (undefined when it is there). */
export interface Need {
  readonly name: string;
  missing(): string | undefined;
  /**
   * Whether its absence is deliberate, so never an error: asked for (NRI_WIRE_GO=0), or a
   * condition of the test matrix rather than of the machine (a Node line; CI runs the others).
   */
  readonly deliberate?: () => boolean;
}

/** Linux (NRI and everything around it is Linux-only: unix sockets, /proc, cgroups). */
export const linux: Need = {
  name: "Linux",
  missing: () => (platform() === "linux" ? undefined : `this is ${platform()}`),
};

/** Running as root (mounts, cgroups, a kubelet). */
export const root: Need = {
  name: "root",
  missing: () => (process.getuid?.() === 0 ? undefined : `running as uid ${process.getuid?.() ?? "unknown"}`),
};

/**
 * A user whom file permissions bind (root passes every permission check). Deliberate: CI runs as
 * root for the runtimes, so the checks that need it run on developers' machines.
 */
export const notRoot: Need = {
  name: "a user file permissions apply to (not root)",
  deliberate: () => true,
  missing: () => (process.getuid?.() === 0 ? "running as root" : undefined),
};

/** A command on PATH, with what it is needed for; `args` runs it to see that it works. */
export function command(name: string, why: string, args: readonly string[] = ["version"]): Need {
  return {
    name: `${name} (${why})`,
    missing: () => {
      try {
        execFileSync(name, args, { stdio: "ignore" });
        return undefined;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === "ENOENT" ? `${name} is not on PATH` : `${name} ${args.join(" ")} failed: ${(e as Error).message}`;
      }
    },
  };
}

/** A file that must exist, with what it is needed for (a program the tests drive by its path). */
export function file(path: string, why: string): Need {
  return { name: `${path} (${why})`, missing: () => (existsSync(path) ? undefined : `${path} does not exist`) };
}

/** The Go toolchain, which builds the Go peers (`NRI_WIRE_GO=0` skips on purpose). */
export function go(why = "it builds the Go peers"): Need {
  const tool = command("go", why);
  return { ...tool, deliberate: () => process.env.NRI_WIRE_GO === "0", missing: () => (process.env.NRI_WIRE_GO === "0" ? "NRI_WIRE_GO=0 asks to skip them" : tool.missing()) };
}

/** A Node line that can do what the suite tests (`can` says whether this one can); the other lines are run by CI too. */
export function nodeLine(what: string, can: (version: string) => boolean): Need {
  return { name: `a Node line that ${what}`, deliberate: () => true, missing: () => (can(process.version) ? undefined : `this is Node ${process.version}`) };
}

/** The outcome of a check: whether the suite runs, and the notice printed when it does not. */
export interface Gate {
  readonly ok: boolean;
  /** `<suite>: NOTICE: skipped <what>: <missing>`, or undefined when it runs. */
  readonly notice: string | undefined;
}

/** The needs that are not met, each with `needs X, but Y` (for programs that cannot run without them). */
export function unmet(needs: readonly Need[]): { need: Need; reason: string }[] {
  return needs.flatMap((need) => {
    const why = missing(need);
    return why === undefined ? [] : [{ need, reason: `needs ${need.name}, but ${why}` }];
  });
}

const checked = new Map<string, string | undefined>();

/** Each need is checked once per process (running `go version` for every suite would be slow). */
function missing(need: Need): string | undefined {
  if (!checked.has(need.name)) checked.set(need.name, need.missing());
  return checked.get(need.name);
}

/**
 * Checks `needs` for `skipped` (what does not run without them, said so that the notice is
 * enough: "the real-runtime suite (containerd and CRI-O)"). Without CI it prints the notice and
 * returns `ok: false`; under CI=true a need that is missing (other than by NRI_WIRE_GO=0) throws,
 * which fails the test file with the reason.
 */
export function prerequisites(area: string, skipped: string, needs: readonly Need[]): Gate {
  const absent = unmet(needs);
  if (absent.length === 0) return { ok: true, notice: undefined };
  const reasons = absent.map((a) => a.reason).join("; ");
  const deliberate = absent.every((a) => a.need.deliberate?.() === true);
  if (process.env.CI === "true" && !deliberate) throw new Error(`${area}: CI=true, but ${skipped} cannot run: ${reasons}`);
  const notice = `${area}: NOTICE: skipped ${skipped}: ${reasons}`;
  console.warn(notice);
  return { ok: false, notice };
}
