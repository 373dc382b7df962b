import type { ConfigureRequest } from "../../gen/v1beta1/api_lite.js";
import { VALID_EVENTS_MASK, formatEventMask } from "../api/events.js";
import type { Logger } from "../api/logger.js";
import { eventsKnownBy, inferNriVersion, isUnknownNriVersion } from "../api/releases.js";
import type { Revision } from "../api/revision.js";
import { RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";
import type { RuntimeInfo } from "./options.js";

/**
 * The runtime a Configure request describes. Runtimes before NRI v0.12 send no NRI version: it
 * is inferred from their name and version, as the Go stub does, and written into `req`.
 */
export function runtimeOf(req: ConfigureRequest, via: Revision, id: string, log: Logger): RuntimeInfo {
  let nriVersion: string | undefined = req.NRIVersion;
  let inferred = false;
  if (isUnknownNriVersion(req.NRIVersion)) {
    nriVersion = undefined;
    try {
      nriVersion = inferNriVersion(req.runtimeName, req.runtimeVersion);
      inferred = true;
      req.NRIVersion = nriVersion;
      log.info(`nri: plugin ${id}: inferred NRI ${nriVersion} for runtime ${req.runtimeName} ${req.runtimeVersion}`);
    } catch (e) {
      log.warn(`nri: plugin ${id}: ${(e as Error).message.replace(/^nri: /u, "")}`);
    }
  }
  return { name: req.runtimeName, version: req.runtimeVersion, nriVersion, nriVersionInferred: inferred, revision: via };
}

/** What subscription() needs of the plugin. */
export interface SubscriptionPolicy {
  readonly id: string;
  /** The events the plugin has handlers for. */
  readonly handled: number;
  readonly unknownEvents: "skip" | "error";
  readonly log: Logger;
}

/**
 * The events to subscribe to: the Configure handler's mask (0, as in the Go stub, means every
 * handled event), less those the runtime's NRI release does not know (skipped with a warning, or
 * an error as the policy says). Throws for a mask beyond the handlers.
 */
export function subscription(asked: number, runtime: RuntimeInfo, p: SubscriptionPolicy): number {
  let events = asked === 0 ? p.handled : asked;
  if ((events & ~VALID_EVENTS_MASK) !== 0 || (events & ~p.handled) !== 0) {
    throw new RpcError(Code.INVALID_ARGUMENT, `configure subscribed events 0x${(events >>> 0).toString(16)} beyond the handlers' 0x${p.handled.toString(16)}`);
  }
  const nriVersion = runtime.nriVersion;
  const known = nriVersion === undefined ? undefined : eventsKnownBy(nriVersion);
  const unknown = known === undefined ? 0 : events & ~known;
  if (unknown !== 0) {
    const what = `${formatEventMask(unknown)} (0x${unknown.toString(16)})`;
    const why = `runtime ${runtime.name} ${runtime.version} has NRI ${nriVersion}${runtime.nriVersionInferred ? " (inferred)" : ""}, which does not know them`;
    if (p.unknownEvents === "error" || (events & ~unknown) === 0) {
      throw new RpcError(Code.FAILED_PRECONDITION, `handlers for events ${what}: ${why}`);
    }
    p.log.warn(`nri: plugin ${p.id}: not subscribing to ${what}: ${why}`);
    events &= ~unknown;
  }
  return events;
}
