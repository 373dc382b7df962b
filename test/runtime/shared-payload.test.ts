import { afterEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { ContainerSchema, CreateContainerRequestSchema, PodSandboxSchema, StartContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { create } from "../../src/api/messages.js";
import { pluginService } from "../../src/api/services.js";
import { encodedOnce, leadingFieldOnce } from "../../src/runtime/shared-payload.js";
import { arbitraryMessage, arbitraryUnknownFields } from "../arbitraries/message.js";
import { concat, hex } from "../support/bytes.js";
import { runs } from "../support/fc.js";
import { runCleanups, scriptedPlugin, startRuntime } from "../support/nri-runtime.js";

afterEach(async () => {
  vi.restoreAllMocks();
  await runCleanups();
});

describe("requests encoded once per event", () => {
  const requests = arbitraryMessage(CreateContainerRequestSchema);

  it("a request whose pod was encoded once is sent as toBinary writes it, with its container as it stands", () => {
    fc.assert(
      fc.property(requests, arbitraryUnknownFields(CreateContainerRequestSchema), fc.boolean(), fc.string(), (m, unknown, withUnknown, annotation) => {
        // Unknown fields of the request itself are written after its known ones.
        const req = withUnknown ? fromBinary(CreateContainerRequestSchema, concat([toBinary(CreateContainerRequestSchema, m), unknown.bytes])) : m;
        const shared = leadingFieldOnce(v1beta1.CreateContainerRequest, req, "pod");
        // Nothing is shared without a pod.
        expect(shared === undefined).toBe(req.pod === undefined);
        const sent = (): Uint8Array => shared?.bytes() ?? v1beta1.CreateContainerRequest.encode(req);
        expect(hex(sent())).toBe(hex(toBinary(CreateContainerRequestSchema, req)));
        // A merge adjusts the container between plugins: the next plugin gets it adjusted.
        req.container ??= create(ContainerSchema);
        req.container.annotations[annotation] = "set";
        expect(hex(sent())).toBe(hex(toBinary(CreateContainerRequestSchema, req)));
      }),
      { numRuns: runs(1) },
    );
  });

  it("a pod replaced after it was encoded is encoded afresh", () => {
    const req = create(CreateContainerRequestSchema, { pod: { id: "first" }, container: { id: "c" } });
    const shared = leadingFieldOnce(v1beta1.CreateContainerRequest, req, "pod");
    req.pod = create(PodSandboxSchema, { id: "second" });
    const sent = fromBinary(CreateContainerRequestSchema, shared!.bytes());
    expect([sent.pod?.id, sent.container?.id]).toEqual(["second", "c"]);
  });

  it("shares nothing for a field that is not the first declared, or not set", () => {
    const req = create(CreateContainerRequestSchema, { pod: { id: "p" }, container: { id: "c" } });
    expect(leadingFieldOnce(v1beta1.CreateContainerRequest, req, "container")).toBeUndefined();
    expect(leadingFieldOnce(v1beta1.CreateContainerRequest, create(CreateContainerRequestSchema, { container: { id: "c" } }), "pod")).toBeUndefined();
  });

  it("a relayed request is encoded once: later changes to it are not sent", () => {
    const req = create(StartContainerRequestSchema, { pod: { id: "p" }, container: { id: "c" } });
    const shared = encodedOnce(v1beta1.StartContainerRequest, req);
    req.container!.id = "changed";
    expect(fromBinary(StartContainerRequestSchema, shared.bytes()).container?.id).toBe("c");
  });

  it("with three plugins, the runtime encodes a relayed request once, and CreateContainer's pod once", async () => {
    // The warm-up's own events would be counted too.
    const { runtime, socket } = await startRuntime({ warmUp: false });
    const got: string[] = [];
    for (const idx of ["10", "11", "12"]) {
      await scriptedPlugin(socket, {
        idx,
        name: `p${idx}`,
        impl: {
          createContainer: (req) => {
            got.push(`${idx} create ${req.pod?.id} ${req.container?.id} ${Object.keys(req.container?.annotations ?? {}).join(",")}`);
            return { adjust: { annotations: { [`a${idx}`]: "x" } } };
          },
          startContainer: (req) => {
            got.push(`${idx} start ${req.pod?.id} ${req.container?.id}`);
            return {};
          },
        },
      });
    }
    await runtime.waitForPlugins(3);
    const start = vi.spyOn(pluginService.startContainer.input, "encode");
    const create = vi.spyOn(pluginService.createContainer.input, "encode");
    await runtime.createContainer({ pod: { id: "p" }, container: { id: "c" } });
    await runtime.startContainer({ pod: { id: "p" }, container: { id: "c" } });
    // CreateContainer: the pod alone, then each plugin's rest (its container adjusted by the plugins before it).
    expect(create.mock.calls.map(([m]) => (m.pod === undefined ? "rest" : "pod"))).toEqual(["pod", "rest", "rest", "rest"]);
    expect(start).toHaveBeenCalledTimes(1);
    expect(got).toEqual(["10 create p c ", "11 create p c a10", "12 create p c a10,a11", "10 start p c", "11 start p c", "12 start p c"]);
  });
});
