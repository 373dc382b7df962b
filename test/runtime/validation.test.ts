import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  CreateContainerRequestSchema,
  CreateContainerResponseSchema,
  ValidateContainerAdjustmentRequestSchema,
  ValidateContainerAdjustmentResponseSchema,
} from "../../gen/v1beta1/api_pb.js";
import { CreateContainerResult } from "../../src/runtime/create-result.js";
import { AdaptationError } from "../../src/runtime/errors.js";
import {
  addValidationPlugin,
  checkValidation,
  completeValidationRequest,
  validationRejection,
  validationRequest,
  validatorFailure,
} from "../../src/runtime/validation.js";

describe("validation request", () => {
  it("holds the pod, the original container, the plugins, the merged reply and the owners", () => {
    const req = fromJson(CreateContainerRequestSchema, { pod: { id: "pod0" }, container: { id: "ctr0", annotations: { orig: "v" } } });
    const vreq = validationRequest(req);
    const result = new CreateContainerResult(req);
    addValidationPlugin(vreq, "10", "a");
    result.apply("10-a", fromJson(CreateContainerResponseSchema, { adjust: { annotations: { "-orig": "", orig: "new" } }, update: [{ containerId: "ctr1" }] }));
    completeValidationRequest(vreq, result);
    expect(toJson(ValidateContainerAdjustmentRequestSchema, vreq)).toEqual({
      pod: { id: "pod0" },
      container: { id: "ctr0", annotations: { orig: "v" }, hooks: {}, linux: { resources: { memory: {}, cpu: {} } } },
      adjust: { annotations: { "-orig": "", orig: "new" }, hooks: {}, linux: { resources: { memory: {}, cpu: {} } } },
      update: [{ containerId: "ctr1", linux: { resources: { memory: {}, cpu: {} } } }],
      owners: { owners: { ctr0: { compound: { "1": { owners: { orig: "10-a" } } } } } },
      plugins: [{ name: "a", index: "10" }],
    });
  });
});

describe("validator verdicts", () => {
  const verdict = (reject: boolean, reason: string) => create(ValidateContainerAdjustmentResponseSchema, { reject, reason });

  it("accepting is no error", () => {
    expect(validationRejection("90-v", verdict(false, "ignored"))).toBeUndefined();
    expect(() => checkValidation("90-v", verdict(false, ""))).not.toThrow();
  });

  it("a rejection has Go's text", () => {
    expect(validationRejection("90-v", verdict(true, "too big"))?.message).toBe('validator "90-v" rejected container adjustment, reason: too big');
    expect(() => checkValidation("90-v", verdict(true, "too big"))).toThrow(AdaptationError);
  });

  it("an empty reason is Go's unknown rejection reason", () => {
    expect(validationRejection("90-v", verdict(true, ""))?.message).toBe('validator "90-v" rejected container adjustment, reason: unknown rejection reason');
  });

  it("a failed validator call has Go's text", () => {
    expect(validatorFailure("90-v", "context deadline exceeded").message).toBe("validator plugin 90-v failed: context deadline exceeded");
  });
});
