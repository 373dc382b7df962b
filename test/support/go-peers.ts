import { relative, resolve } from "node:path";
import { beforeAll, expect } from "vitest";
import { goAvailable, goBuild } from "../interop/support.js";

/** A Go program to build: its folder under test/interop, the binary's name, extra `go build` flags. */
export type GoTarget = readonly [dir: string, name: string, flags?: readonly string[]];

/** The containerd/nri releases the nri-peer builds on, with the module file and tag that pin each. */
const NRI_RELEASE_FLAGS = {
  "v0.12.5": [],
  "v0.11.0": ["-modfile=nri-v0.11.0.mod", "-tags=nri_v0_11"],
  "v0.8.0": ["-modfile=nri-v0.8.0.mod", "-tags=nri_v0_8"],
} as const satisfies Record<string, readonly string[]>;

/** A containerd/nri release an nri-peer is built on. */
export type NriRelease = keyof typeof NRI_RELEASE_FLAGS;

/**
 * test/interop/nri-peer built on `release` as `<prefix>-<release>`. Each suite has its own
 * prefix: suites run in parallel and must not write the same binary.
 */
export function nriPeer(prefix: string, release: NriRelease): GoTarget {
  return ["nri-peer", `${prefix}-${release}`, NRI_RELEASE_FLAGS[release]];
}

/** The Go peers of a suite. */
export interface GoPeers<K extends string> {
  /** Whether Go is on PATH; tests that need a peer skip without it (under CI=true it must be: see prerequisites.ts). */
  readonly hasGo: boolean;
  /** Each built binary's path by key, filled in before the suite's tests run. */
  readonly bin: Readonly<Record<K, string>>;
}

/**
 * Builds `targets` in a `beforeAll` of the calling suite (or describe block), when Go is there;
 * a failed build fails the suite.
 */
export function useGoPeers<K extends string>(targets: Readonly<Record<K, GoTarget>>): GoPeers<K> {
  const file = relative(resolve(import.meta.dirname, "../.."), expect.getState().testPath ?? "");
  const programs = [...new Set(Object.values<GoTarget>(targets).map(([dir]) => `test/interop/${dir}`))].join(", ");
  const hasGo = goAvailable(file, `the tests against the Go peers built from ${programs}`);
  const bin = {} as Record<K, string>;
  beforeAll(() => {
    if (!hasGo) return;
    for (const key of Object.keys(targets) as K[]) {
      const [dir, name, flags] = targets[key];
      bin[key] = goBuild(dir, name, flags);
    }
  }, 600_000);
  return { hasGo, bin };
}
