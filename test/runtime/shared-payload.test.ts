import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { ContainerSchema, CreateContainerRequestSchema, PodSandboxSchema, StartContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { create } from "../../src/runtime/messages.js";
import { encodedRequest, shareEncoded, shareLeadingField } from "../../src/runtime/shared-payload.js";
import { arbitraryMessage, arbitraryUnknownFields } from "../arbitraries/message.js";
import { concat, hex } from "../support/bytes.js";
import { runs } from "../support/fc.js";

describe("requests encoded once per event", () => {
  const requests = arbitraryMessage(CreateContainerRequestSchema);

  it("a request whose pod was encoded once is sent as toBinary writes it, with its container as it stands", () => {
    fc.assert(
      fc.property(requests, arbitraryUnknownFields(CreateContainerRequestSchema), fc.boolean(), fc.string(), (m, unknown, withUnknown, annotation) => {
        // Unknown fields of the request itself are written after its known ones.
        const req = withUnknown ? fromBinary(CreateContainerRequestSchema, concat([toBinary(CreateContainerRequestSchema, m), unknown.bytes])) : m;
        shareLeadingField(v1beta1.CreateContainerRequest, req, "pod");
        expect(hex(encodedRequest(v1beta1.CreateContainerRequest, req))).toBe(hex(toBinary(CreateContainerRequestSchema, req)));
        // A merge adjusts the container between plugins: the next plugin gets it adjusted.
        req.container ??= create(ContainerSchema);
        req.container.annotations[annotation] = "set";
        expect(hex(encodedRequest(v1beta1.CreateContainerRequest, req))).toBe(hex(toBinary(CreateContainerRequestSchema, req)));
      }),
      { numRuns: runs(1) },
    );
  });

  it("a pod replaced after it was encoded is encoded afresh", () => {
    const req = create(CreateContainerRequestSchema, { pod: { id: "first" }, container: { id: "c" } });
    shareLeadingField(v1beta1.CreateContainerRequest, req, "pod");
    req.pod = create(PodSandboxSchema, { id: "second" });
    const sent = fromBinary(CreateContainerRequestSchema, encodedRequest(v1beta1.CreateContainerRequest, req));
    expect([sent.pod?.id, sent.container?.id]).toEqual(["second", "c"]);
  });

  it("keeps nothing for a field that is not the first declared, or not set", () => {
    const req = create(CreateContainerRequestSchema, { pod: { id: "p" }, container: { id: "c" } });
    shareLeadingField(v1beta1.CreateContainerRequest, req, "container");
    req.container!.id = "changed";
    expect(fromBinary(CreateContainerRequestSchema, encodedRequest(v1beta1.CreateContainerRequest, req)).container?.id).toBe("changed");
    const unset = create(CreateContainerRequestSchema, { container: { id: "c" } });
    shareLeadingField(v1beta1.CreateContainerRequest, unset, "pod");
    unset.pod = create(PodSandboxSchema, { id: "late" });
    expect(fromBinary(CreateContainerRequestSchema, encodedRequest(v1beta1.CreateContainerRequest, unset)).pod?.id).toBe("late");
  });

  it("a relayed request is encoded once: later changes to it are not sent", () => {
    const req = create(StartContainerRequestSchema, { pod: { id: "p" }, container: { id: "c" } });
    shareEncoded(v1beta1.StartContainerRequest, req);
    req.container!.id = "changed";
    expect(fromBinary(StartContainerRequestSchema, encodedRequest(v1beta1.StartContainerRequest, req)).container?.id).toBe("c");
  });
});
