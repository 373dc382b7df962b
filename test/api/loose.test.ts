import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CreateContainerResponseSchema, OptionalBoolSchema, SynchronizeResponseSchema } from "../../gen/v1beta1/api_pb.js";
import { toMessage } from "../../src/api/loose.js";

describe("loose messages", () => {
  it("turns numbers into the bigints of 64-bit fields and bare values into their wrappers", () => {
    const got = toMessage(SynchronizeResponseSchema, {
      update: [{ containerId: "c", linux: { resources: { memory: { limit: 1024, swappiness: { value: 5 } }, cpu: { shares: 2n, cpus: "0" }, blockioClass: "slow", hugepageLimits: [{ pageSize: "2MB", limit: 4096 }] } } }],
    });
    expect(got).toEqual(
      create(SynchronizeResponseSchema, {
        update: [
          {
            containerId: "c",
            linux: { resources: { memory: { limit: { value: 1024n }, swappiness: { value: 5n } }, cpu: { shares: { value: 2n }, cpus: "0" }, blockioClass: { value: "slow" }, hugepageLimits: [{ pageSize: "2MB", limit: 4096n }] } },
          },
        ],
      }),
    );
  });

  it("takes bare values of every wrapper kind: strings, string lists, booleans, 32-bit numbers", () => {
    const got = toMessage(CreateContainerResponseSchema, {
      adjust: { linux: { oomScoreAdj: -5, rdt: { closId: "c", schemata: ["L3:0=f"], enableMonitoring: true }, devices: [{ path: "/dev/x", fileMode: 0o600, uid: 7 }], resources: { memory: { disableOomKiller: false } } } },
    });
    expect(got.adjust?.linux?.oomScoreAdj?.value).toBe(-5n);
    expect(got.adjust?.linux?.rdt?.schemata?.value).toEqual(["L3:0=f"]);
    expect(got.adjust?.linux?.rdt?.enableMonitoring?.value).toBe(true);
    expect(got.adjust?.linux?.devices[0]?.fileMode?.value).toBe(0o600);
    expect(got.adjust?.linux?.devices[0]?.uid?.value).toBe(7);
    expect(got.adjust?.linux?.resources?.memory?.disableOomKiller).toEqual(create(OptionalBoolSchema, { value: false }));
  });

  it("names the field by its protocol path when a number is out of range, in lists and maps too", () => {
    expect(() => toMessage(SynchronizeResponseSchema, { update: [{}, { linux: { resources: { cpu: { shares: -1 } } } }] })).toThrow(
      "nri: update[1].linux.resources.cpu.shares.value: -1 is out of range for uint64 (0 to 18446744073709551615)",
    );
    expect(() => toMessage(CreateContainerResponseSchema, { adjust: { rlimits: [{ type: "RLIMIT_NOFILE", hard: 0.5 }] } })).toThrow("nri: adjust.rlimits[0].hard: 0.5 is not an integer");
    expect(() => toMessage(CreateContainerResponseSchema, { adjust: { linux: { devices: [{ uid: 2 ** 32 }] } } })).toThrow(
      "nri: adjust.linux.devices[0].uid.value: 4294967296 is out of range for uint32 (0 to 4294967295)",
    );
  });

  it("keeps a map key `__proto__` as an entry, and a field key `__proto__` from being the prototype", () => {
    const got = toMessage(CreateContainerResponseSchema, { adjust: { annotations: JSON.parse('{"__proto__": "p", "a": "1"}') as Record<string, string> } });
    expect(Object.keys(got.adjust?.annotations ?? {})).toEqual(["__proto__", "a"]);
    expect(Object.getPrototypeOf(got.adjust?.annotations)).toBe(Object.prototype);
    // protobuf-es reads the entry back from the wire.
    const back = fromBinary(CreateContainerResponseSchema, toBinary(CreateContainerResponseSchema, got)).adjust?.annotations ?? {};
    expect(Object.entries(back)).toEqual([["__proto__", "p"], ["a", "1"]]);
    const plain = toMessage(SynchronizeResponseSchema, JSON.parse('{"__proto__": {"more": true}}') as object);
    expect(plain.more).toBe(false);
  });

  it("passes a message through untouched, and makes the empty message of nothing", () => {
    const m = create(SynchronizeResponseSchema, { more: true });
    expect(toMessage(SynchronizeResponseSchema, m)).toBe(m);
    expect(toMessage(SynchronizeResponseSchema, undefined)).toEqual(create(SynchronizeResponseSchema));
  });
});
