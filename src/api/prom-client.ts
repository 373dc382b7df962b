import { isMissing, missingPeerError } from "../internal/optional-peer.js";

/** The prom-client module (an optional peer: no public declaration names this type). */
export type PromClient = typeof import("prom-client");

/** Loads prom-client; rejects with one line saying to install it when it is missing. */
export async function loadPromClient(): Promise<PromClient> {
  try {
    const m = (await import("prom-client")) as PromClient & { default?: PromClient };
    // CommonJS seen from ESM (and from a bundle): the named exports may sit on `default`.
    return typeof m.Counter === "function" ? m : m.default!;
  } catch (e) {
    if (isMissing(e, "prom-client")) throw missingPeerError("prom-client", "prometheus metrics", e);
    throw e;
  }
}
