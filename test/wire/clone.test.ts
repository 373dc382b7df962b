import { describe, expect, it } from "vitest";
import { clone as reflectiveClone, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { TreeSchema, WithStructSchema } from "../codegen/gen/kitchen/v1/kitchen_pb.js";
import * as beta from "../../src/v1beta1.js";
import { MESSAGES } from "../support/generated-cases.js";
import * as plugin from "../../src/plugin/index.js";
import { concat } from "../support/bytes.js";

/*
 * clone() of a registry: the generated copy when a table holds the message, protobuf-es clone()
 * otherwise. The two differ in one observable way, which tells them apart:
 * the generated copy owns its unknown fields, protobuf-es shares their entries.
 */

/** A Tree holding unknown field 7 (varint 1) at its top and in its first child. */
function treeWithUnknown() {
  const unknown = new Uint8Array([0x38, 0x01]);
  const child = concat([toBinary(TreeSchema, create(TreeSchema, { weight: 2 })), unknown]);
  const bytes = concat([new Uint8Array([0x1a, child.length]), child, unknown]);
  return fromBinary(TreeSchema, bytes);
}

describe("registry clone()", () => {
  const { clone } = MESSAGES;

  it("goes through the generated clone when a table holds the message: unknown fields are copied, not shared", () => {
    const m = treeWithUnknown();
    const got = clone(TreeSchema, m);
    expect(got).toStrictEqual(reflectiveClone(TreeSchema, m));
    expect(got.$unknown).toHaveLength(1);
    expect(got.$unknown![0]).not.toBe(m.$unknown![0]);
    expect(got.$unknown![0]!.data).not.toBe(m.$unknown![0]!.data);
    expect(got.children[0]!.$unknown![0]).not.toBe(m.children[0]!.$unknown![0]);
    expect(reflectiveClone(TreeSchema, m).$unknown![0]).toBe(m.$unknown![0]);
  });

  it("falls back to protobuf-es for a message without generated code", () => {
    const m = create(WithStructSchema, { fields: { a: 1, b: [true, "x"] }, name: "n" });
    const got = clone(WithStructSchema, m);
    expect(got).toStrictEqual(reflectiveClone(WithStructSchema, m));
    expect(got.fields).not.toBe(m.fields);
  });

  it("nri-wire/plugin's clone() copies v1beta1 messages by their generated code", () => {
    const pod = plugin.create(beta.PodSandboxSchema, { id: "p", labels: { a: "b" }, linux: { cgroupParent: "/x" } });
    const got = plugin.clone(beta.PodSandboxSchema, pod);
    expect(got).toStrictEqual(pod);
    expect(got.labels).not.toBe(pod.labels);
    expect(got.linux).not.toBe(pod.linux);
  });
});
