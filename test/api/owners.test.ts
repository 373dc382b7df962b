import { describe, expect, it } from "vitest";
import { Field, type OwningPlugins } from "../../gen/v1beta1/api_lite.js";
import { OwningPluginsSchema } from "../../gen/v1beta1/api_pb.js";
import * as owners from "../../src/api/owners.js";
import { create } from "../../src/api/messages.js";
import { TestRuntime } from "../../src/testing/index.js";

const pod = { id: "pod1", name: "p", uid: "u1", namespace: "default" };
const ctr = { id: "ctr1", podSandboxId: "pod1", name: "c" };

describe("owner lookups", () => {
  it("one per field of the Field enum, reading single-valued and keyed fields", () => {
    const message: OwningPlugins = create(OwningPluginsSchema, {
      owners: { ctr1: { simple: { [Field.MemLimit]: "10-a", [Field.OciHooks]: "10-a,20-b" }, compound: { [Field.Annotations]: { owners: { k: "-20-b" } } } } },
    });
    expect([
      owners.memLimitOwner(message, "ctr1"),
      owners.hooksOwner(message, "ctr1"),
      owners.annotationOwner(message, "ctr1", "k"),
      owners.annotationOwner(message, "ctr1", "toString"),
      owners.cpuSharesOwner(message, "ctr1"),
      owners.memLimitOwner(message, "ctr2"),
      owners.memLimitOwner(undefined, "ctr1"),
    ]).toEqual(["10-a", "10-a,20-b", "-20-b", undefined, undefined, undefined, undefined]);
    // Every field but None has its lookup (two generic ones besides).
    const lookups = Object.keys(owners).filter((k) => k.endsWith("Owner") && k !== "fieldOwner" && k !== "keyedFieldOwner");
    expect(lookups.length).toBe(Object.values(Field).filter((v) => typeof v === "number" && v !== Field.None).length);
  });

  it("a validator reads who set the memory limit and refuses it", async () => {
    const runtime = await TestRuntime.start();
    try {
      await runtime.startPlugin({ createContainer: () => ({ adjust: { linux: { resources: { memory: { limit: 1 << 30 } } } } }) }, { name: "setter", idx: "10" });
      await runtime.startPlugin(
        {
          validateContainerAdjustment: (req) => {
            const owner = owners.memLimitOwner(req.owners, req.container!.id);
            if (owner !== undefined && owner !== "10-trusted") throw new Error(`memory limit set by ${owner}`);
          },
        },
        { name: "validator", idx: "90", log: { error: () => undefined } },
      );
      const e = await runtime.createContainer({ pod, container: ctr }).then(() => undefined, (x: Error) => x.message);
      expect(e).toBe("validator plugin 90-validator failed: rpc error: code = Unknown desc = memory limit set by 10-setter");
    } finally {
      await runtime.stop();
    }
  });
});
