import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventsKnownBy, inferNriVersion } from "../../src/api/releases.js";
import { closestAtOrBelow, compareSemver, parseSemver } from "../../src/api/semver.js";
import "../support/fc.js";

describe("NRI version of a runtime that sends none", () => {
  it("follows the release table: the closest runtime release at or below", () => {
    const cases: [string, string, string][] = [
      ["containerd", "v1.7.0", "v0.3.0"],
      ["containerd", "v1.7.13", "v0.4.0"],
      ["containerd", "v1.7.30", "v0.8.0"],
      ["containerd", "v2.1.6", "v0.8.0"],
      ["containerd", "v2.2.0", "v0.10.0"],
      ["containerd", "v2.3.4", "v0.11.0"],
      ["containerd", "2.2.0", "v0.10.0"],
      ["containerd", "v2.2.0-225-ge9dc15b7a.m", "v0.10.0"],
      ["cri-o", "v1.26.4", "v0.3.1-0.20230504231226-94185418e253"],
      ["cri-o", "v1.27.0", "v0.3.0"],
      ["cri-o", "1.31.13", "v0.6.1"],
      ["cri-o", "1.32.0", "v0.9.0"],
      ["cri-o", "1.34.0", "v0.9.1-0.20250219030224-e597e7849f24"],
      ["cri-o", "1.35.2", "v0.11.0"],
    ];
    expect(cases.map(([n, v]) => inferNriVersion(n, v))).toEqual(cases.map(([, , want]) => want));
  });

  it("says why when it cannot", () => {
    expect(() => inferNriVersion("podman", "v5.0.0")).toThrow('nri: cannot infer the NRI version of unknown runtime "podman"');
    expect(() => inferNriVersion("containerd", "v1.6.9")).toThrow("nri: cannot infer the NRI version of containerd v1.6.9: no known release at or below it");
    expect(() => inferNriVersion("containerd", "latest")).toThrow("nri: cannot infer the NRI version of containerd latest: no known release at or below it");
  });

  it("knows which events each NRI release accepts", () => {
    expect(eventsKnownBy("v0.6.1")).toBe(0x7ff);
    expect(eventsKnownBy("v0.9.0")).toBe(0x7ff);
    expect(eventsKnownBy("v0.9.1-0.20250219030224-e597e7849f24")).toBe(0x1fff);
    expect(eventsKnownBy("v0.10.0")).toBe(0x3fff);
    expect(eventsKnownBy("v0.12.5")).toBe(0x3fff);
    expect(eventsKnownBy("v0.0.1")).toBeUndefined();
    expect(eventsKnownBy("devel")).toBeUndefined();
  });
});

describe("semantic versions", () => {
  it("orders releases after their pre-releases and numerically", () => {
    const order = ["v0.9.0", "v0.9.1-0.2025", "v0.9.1-alpha", "v0.9.1", "v0.10.0", "v1", "v1.0.1", "v10.0.0"];
    for (let i = 0; i + 1 < order.length; i++) expect(compareSemver(parseSemver(order[i]!)!, parseSemver(order[i + 1]!)!), `${order[i]} < ${order[i + 1]}`).toBe(-1);
    expect(parseSemver("v1.2")).toEqual({ nums: [1n, 2n, 0n], pre: [] });
    expect(parseSemver("v1.2-rc1")).toBeUndefined();
    expect(parseSemver("v01.2.3")).toBeUndefined();
    expect(parseSemver("v1.2.3-01")).toBeUndefined();
    expect(parseSemver("v1.2.3+build.5")).toEqual({ nums: [1n, 2n, 3n], pre: [] });
  });

  it("closestAtOrBelow picks the largest not above, whatever the order given", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)), { minLength: 1 }), fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)), (rows, v) => {
        const text = ([a, b, c]: [number, number, number]): string => `v${a}.${b}.${c}`;
        const got = closestAtOrBelow(text(v), rows.map(text));
        const below = rows.filter((r) => compareSemver(parseSemver(text(r))!, parseSemver(text(v))!) <= 0);
        if (below.length === 0) return got === undefined;
        return got !== undefined && below.every((r) => compareSemver(parseSemver(text(r))!, parseSemver(got)!) <= 0);
      }),
    );
  });
});
