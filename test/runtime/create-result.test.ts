import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  CreateContainerRequestSchema,
  CreateContainerResponseSchema,
  Field,
  UpdateContainerRequestSchema,
  UpdateContainerResponseSchema,
  StopContainerResponseSchema,
} from "../../gen/v1beta1/api_pb.js";
import { CreateContainerResult } from "../../src/runtime/create-result.js";
import { AdaptationError } from "../../src/runtime/errors.js";
import { keyedFieldOwner, fieldOwner } from "../../src/api/owners.js";
import { StopContainerResult, UpdateContainerResult } from "../../src/runtime/update-result.js";
import { expectThrown } from "../support/errors.js";

const thrown = (f: () => void): string => expectThrown(AdaptationError, f).message;

const request = () => fromJson(CreateContainerRequestSchema, { container: { id: "ctr0", annotations: { orig: "v" } } });
const reply = (json: object) => fromJson(CreateContainerResponseSchema, json as never);

describe("CreateContainerResult", () => {
  it("fills the request's container and replies with Go's empty parts", () => {
    const req = fromJson(CreateContainerRequestSchema, {});
    const result = new CreateContainerResult(req);
    result.apply("10-a", undefined);
    expect(toJson(CreateContainerRequestSchema, req)).toEqual({ container: { hooks: {}, linux: { resources: { memory: {}, cpu: {} } } } });
    expect(toJson(CreateContainerResponseSchema, result.response())).toEqual({ adjust: { hooks: {}, linux: { resources: { memory: {}, cpu: {} } } } });
  });

  it("adjusts the request's container in place for later plugins", () => {
    const req = request();
    const result = new CreateContainerResult(req);
    result.apply("10-a", reply({ adjust: { annotations: { a: "1", "-orig": "" }, env: [{ key: "E", value: "1" }], args: ["x"] } }));
    expect(req.container!.annotations).toEqual({ orig: "v", a: "1" });
    expect(req.container!.env).toEqual(["E=1"]);
    expect(req.container!.args).toEqual(["x"]);
  });

  it("records owners in the OwningPlugins message", () => {
    const result = new CreateContainerResult(request());
    result.apply("10-a", reply({ adjust: { annotations: { a: "1" }, hooks: { prestart: [{ path: "/h" }] } } }));
    result.apply("20-b", reply({ adjust: { hooks: { poststop: [{ path: "/h" }] }, linux: { resources: { memory: { limit: { value: "1" } } } } } }));
    const owners = result.owners();
    expect(keyedFieldOwner(owners, "ctr0", Field.Annotations, "a")).toBe("10-a");
    expect(fieldOwner(owners, "ctr0", Field.OciHooks)).toBe("10-a,20-b");
    expect(fieldOwner(owners, "ctr0", Field.MemLimit)).toBe("20-b");
  });

  it("conflicts carry Go's text", () => {
    const result = new CreateContainerResult(request());
    result.apply("10-a", reply({ adjust: { linux: { resources: { cpu: { cpus: "1" } }, cgroupsPath: "/a" } } }));
    expect(thrown(() => result.apply("20-b", reply({ adjust: { linux: { resources: { cpu: { cpus: "2" } } } } })))).toBe(
      'plugins "20-b" and "10-a" both tried to set CPUSetCPUs ',
    );
  });

  it("updating the container being created fails with Go's text, the id quoted as Go quotes", () => {
    const req = fromJson(CreateContainerRequestSchema, { container: { id: 'ct"r\n0' } });
    const result = new CreateContainerResult(req);
    expect(thrown(() => result.apply("10-a", reply({ update: [{ containerId: 'ct"r\n0' }] })))).toBe('plugin "10-a" asked update of "ct\\"r\\n0" during creation');
  });

  it("ignores evictions", () => {
    const result = new CreateContainerResult(request());
    result.apply("10-a", reply({ evict: [{ containerId: "x" }] }));
    expect(result.response().evict).toEqual([]);
  });
});

describe("UpdateContainerResult", () => {
  it("ends the list with the target's update, or an empty one", () => {
    const req = fromJson(UpdateContainerRequestSchema, { container: { id: "ctr1" } });
    const result = new UpdateContainerResult(req);
    result.apply("10-a", fromJson(UpdateContainerResponseSchema, { update: [{ containerId: "ctr2", linux: { resources: { cpu: { cpus: "1" } } } }] }));
    expect(result.targetUpdate()).toBeUndefined();
    expect(toJson(UpdateContainerResponseSchema, result.response())).toEqual({ update: [{ containerId: "ctr2", linux: { resources: { memory: {}, cpu: { cpus: "1" } } } }, {}] });
    result.apply("20-b", fromJson(UpdateContainerResponseSchema, { update: [{ containerId: "ctr1", linux: { resources: { cpu: { mems: "0" } } } }] }));
    expect((toJson(UpdateContainerRequestSchema, req) as { linuxResources?: unknown }).linuxResources).toEqual({ memory: {}, cpu: { mems: "0" } });
    expect(result.response().update.map((u) => u.containerId)).toEqual(["ctr2", "ctr1"]);
  });

  it("discards a conflicting update with ignore_failure, whole", () => {
    const req = fromJson(UpdateContainerRequestSchema, { container: { id: "ctr1" } });
    const result = new UpdateContainerResult(req);
    result.apply("10-a", fromJson(UpdateContainerResponseSchema, { update: [{ containerId: "ctr1", linux: { resources: { cpu: { cpus: "1" } } } }] }));
    result.apply("20-b", fromJson(UpdateContainerResponseSchema, { update: [{ containerId: "ctr1", ignoreFailure: true, linux: { resources: { cpu: { mems: "1", cpus: "2" } } } }] }));
    expect((toJson(UpdateContainerRequestSchema, req) as { linuxResources?: unknown }).linuxResources).toEqual({ memory: {}, cpu: { cpus: "1" } });
    expect(result.targetUpdate()!.ignoreFailure).toBe(false);
    expect(
      thrown(() => result.apply("30-c", fromJson(UpdateContainerResponseSchema, { update: [{ containerId: "ctr1", linux: { resources: { cpu: { cpus: "3" } } } }] }))),
    ).toBe('plugins "30-c" and "10-a" both tried to set CPUSetCPUs ');
  });
});

describe("StopContainerResult", () => {
  it("lists every updated container in first-mention order", () => {
    const result = new StopContainerResult();
    result.apply("10-a", fromJson(StopContainerResponseSchema, { update: [{ containerId: "b" }, { containerId: "a" }] }));
    result.apply("20-b", fromJson(StopContainerResponseSchema, { update: [{ containerId: "c" }, { containerId: "b" }] }));
    expect(result.response().update.map((u) => u.containerId)).toEqual(["b", "a", "c"]);
    expect(create(StopContainerResponseSchema).update).toEqual([]);
  });
});
