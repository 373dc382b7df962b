import { beforeAll, describe, expect, it } from "vitest";
import { useGoPeers } from "../support/go-peers.js";
import { expectSameAsGo, type Outcome, runGo, runTs } from "./adapt-scenario.js";
import { CASES } from "./adapt-scenarios.js";

/**
 * The merge engine against the real Go runtime adaptation (containerd/nri v0.12.5, built from
 * test/interop/adapt-peer): the same scenario through both must give the same response or error
 * text, and every plugin and validator must have received the same request. Go's random orders
 * (map iteration, concurrent validators) are compared order-insensitively; see `canonical`.
 */

const { hasGo, bin } = useGoPeers({ cases: ["adapt-peer", "adapt-peer-cases", ["-tags=nri_no_wasm"]] });
let go: Outcome[] = [];

beforeAll(async () => {
  if (!hasGo) return;
  go = await runGo(bin.cases, CASES.map((c) => c.scenario));
}, 600_000);

describe("merge engine: hand-written scenarios", () => {
  CASES.forEach((c, i) => {
    describe(c.name, () => {
      it("nri-wire answers as stated", () => {
        const ts = runTs(c.scenario);
        expect(ts.error).toBe(c.error);
        c.check?.(ts);
      });
      it.skipIf(!hasGo)("the Go runtime answers the same", () => {
        expectSameAsGo(runTs(c.scenario), go[i]!);
      });
    });
  });
});
