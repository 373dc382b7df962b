import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import * as alpha from "../../gen/v1alpha1/api_pb.js";
import * as beta from "../../gen/v1beta1/api_pb.js";
import { type EventCalls, responseToV1alpha1, responseToV1beta1, toV1alpha1, toV1beta1 } from "../../src/translate/index.js";

/** One test per bug of the earlier upstream attempt (PROTOCOL.md §4). */

const A = "nri.pkg.api.v1alpha1";
const B = "nri.pkg.api.v1beta1";
const dialects: readonly EventCalls[] = ["dedicated", "statechange"];
const pod = create(beta.PodSandboxSchema, { id: "pod-1", name: "web", labels: { app: "web" } });
const container = create(beta.ContainerSchema, { id: "ctr-1", podSandboxId: "pod-1", name: "nginx", args: ["nginx"] });

describe("upstream bugs", () => {
  it.each([
    ["PostUpdatePodSandbox", 13, "POST_UPDATE_POD_SANDBOX", "STOP_POD_SANDBOX", toBinary(beta.PostUpdatePodSandboxRequestSchema, create(beta.PostUpdatePodSandboxRequestSchema, { pod })), undefined],
    ["PostUpdateContainer", 9, "POST_UPDATE_CONTAINER", "POST_START_CONTAINER", toBinary(beta.PostUpdateContainerRequestSchema, create(beta.PostUpdateContainerRequestSchema, { pod, container })), "ctr-1"],
  ] as const)("%s is event %i (%s), not %s", (method, number, name, _not, payload, containerId) => {
    const out = toV1alpha1({ service: `${B}.Plugin`, method, payload }, "statechange");
    expect(out.method).toBe("StateChange");
    const sc = fromBinary(alpha.StateChangeEventSchema, out.payload);
    expect(sc.event).toBe(alpha.Event[name]);
    expect(sc.event).toBe(number);
    expect(sc.pod?.id).toBe("pod-1");
    expect(sc.container?.id).toBe(containerId);
    const back = toV1beta1(out);
    expect(back.method).toBe(method);
    expect(back.payload).toEqual(payload);
  });

  it("UpdateContainers requests and responses keep their bytes, never emptied", () => {
    const update = { containerId: "ctr-1", linux: { resources: { cpu: { shares: { value: 512n } } } } };
    const request = toBinary(
      beta.UpdateContainersRequestSchema,
      create(beta.UpdateContainersRequestSchema, { update: [update], evict: [{ containerId: "ctr-2", reason: "oom" }] }),
    );
    const response = toBinary(beta.UpdateContainersResponseSchema, create(beta.UpdateContainersResponseSchema, { failed: [update] }));
    expect(request.length).toBeGreaterThan(0);
    expect(response.length).toBeGreaterThan(0);
    for (const dialect of dialects) {
      const down = toV1alpha1({ service: `${B}.Runtime`, method: "UpdateContainers", payload: request }, dialect);
      expect(down).toEqual({ service: `${A}.Runtime`, method: "UpdateContainers", payload: request });
      expect(down.payload).toBe(request);
    }
    const up = toV1beta1({ service: `${A}.Runtime`, method: "UpdateContainers", payload: request });
    expect(up.payload).toBe(request);
    const r1 = responseToV1beta1({ service: `${B}.Runtime`, method: "UpdateContainers" }, response);
    expect(r1).toEqual({ typeName: `${B}.UpdateContainersResponse`, payload: response });
    const r2 = responseToV1alpha1({ service: `${A}.Runtime`, method: "UpdateContainers" }, response);
    expect(r2).toEqual({ typeName: `${A}.UpdateContainersResponse`, payload: response });
    expect(fromBinary(alpha.UpdateContainersResponseSchema, r2.payload).failed[0]?.containerId).toBe("ctr-1");
  });

  it("SynchronizeRequest.more and SynchronizeResponse.more are kept", () => {
    const request = toBinary(beta.SynchronizeRequestSchema, create(beta.SynchronizeRequestSchema, { pods: [pod], containers: [container], more: true }));
    for (const dialect of dialects) {
      const down = toV1alpha1({ service: `${B}.Plugin`, method: "Synchronize", payload: request }, dialect);
      expect(fromBinary(alpha.SynchronizeRequestSchema, down.payload).more).toBe(true);
      const up = toV1beta1(down);
      expect(fromBinary(beta.SynchronizeRequestSchema, up.payload).more).toBe(true);
    }
    const response = toBinary(beta.SynchronizeResponseSchema, create(beta.SynchronizeResponseSchema, { more: true }));
    const r1 = responseToV1alpha1({ service: `${A}.Plugin`, method: "Synchronize" }, response);
    expect(fromBinary(alpha.SynchronizeResponseSchema, r1.payload).more).toBe(true);
    const r2 = responseToV1beta1({ service: `${B}.Plugin`, method: "Synchronize" }, response);
    expect(fromBinary(beta.SynchronizeResponseSchema, r2.payload).more).toBe(true);
  });

  it("Shutdown is forwarded both ways (as Shutdown(Empty) to v1alpha1; the reason cannot travel)", () => {
    const request = toBinary(beta.ShutdownRequestSchema, create(beta.ShutdownRequestSchema, { reason: "runtime stopping" }));
    for (const dialect of dialects) {
      const down = toV1alpha1({ service: `${B}.Plugin`, method: "Shutdown", payload: request }, dialect);
      expect(down).toEqual({ service: `${A}.Plugin`, method: "Shutdown", payload: new Uint8Array(0) });
    }
    const up = toV1beta1({ service: `${A}.Plugin`, method: "Shutdown", payload: new Uint8Array(0) });
    expect(up).toEqual({ service: `${B}.Plugin`, method: "Shutdown", payload: new Uint8Array(0) });
    expect(fromBinary(beta.ShutdownRequestSchema, up.payload).reason).toBe("");
    expect(responseToV1beta1({ service: `${B}.Plugin`, method: "Shutdown" }, new Uint8Array(0)).typeName).toBe(`${B}.ShutdownResponse`);
    expect(responseToV1alpha1({ service: `${A}.Plugin`, method: "Shutdown" }, new Uint8Array(0)).typeName).toBe(`${A}.Empty`);
  });
});
