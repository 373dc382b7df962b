/**
 * The JavaScript engine running this process, and whether nri-wire runs on it. The library is one
 * code base on Node, Bun and Deno; where their Node APIs differ (adopting an inherited socket, see
 * api/socket.ts), the engine decides. An engine or version nri-wire does not run on is refused
 * at start, in one line naming what it runs on, rather than failing later in a way that names
 * nothing (an older Bun never reads the runtime's socket on fd 3: the plugin would hang).
 */

/** The engines nri-wire runs on. */
export type EngineName = "node" | "bun" | "deno";

/** An engine and its version (`1.4.5`, no `v`). */
export interface Engine {
  readonly name: EngineName;
  readonly version: string;
}

/** The oldest version of each engine nri-wire runs on, as [major, minor]. */
export const OLDEST: Readonly<Record<EngineName, readonly [number, number]>> = { node: [22, 12], bun: [1, 4], deno: [2, 9] };

const LABEL: Readonly<Record<EngineName, string>> = { node: "Node", bun: "Bun", deno: "Deno" };

/** What nri-wire runs on, as errors say it. */
export const SUPPORTED_ENGINES = (Object.keys(OLDEST) as EngineName[]).map((e) => `${LABEL[e]} ${OLDEST[e].join(".")} or later`).join(", ");

/** The engine of this process: Bun and Deno say so in `process.versions`, beside the Node version they emulate. */
export function currentEngine(versions: NodeJS.ProcessVersions & { bun?: string; deno?: string } = process.versions): Engine {
  if (versions.bun !== undefined) return { name: "bun", version: versions.bun };
  if (versions.deno !== undefined) return { name: "deno", version: versions.deno };
  return { name: "node", version: versions.node };
}

/** `Bun 1.4.5`. */
export function engineLabel(e: Engine): string {
  return `${LABEL[e.name]} ${e.version}`;
}

/** Whether nri-wire runs on `e`: not older than OLDEST (a version it cannot read is not supported). */
export function isSupported(e: Engine): boolean {
  const m = /^v?(\d+)\.(\d+)/u.exec(e.version);
  const [major, minor] = OLDEST[e.name];
  return m !== null && (Number(m[1]) > major || (Number(m[1]) === major && Number(m[2]) >= minor));
}

/** Throws, naming the engine and what nri-wire runs on, when `e` is older than OLDEST. */
export function checkEngine(e: Engine = currentEngine()): void {
  if (isSupported(e)) return;
  throw new Error(`nri: ${engineLabel(e)} is not supported: nri-wire runs on ${SUPPORTED_ENGINES}`);
}
