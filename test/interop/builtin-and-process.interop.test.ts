import { create, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { deviceInjector } from "../../examples/device-injector.js";
import { ContainerAdjustmentSchema, CreateContainerRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { NriRuntime } from "../../src/runtime/index.js";
import { nriPeer, useGoPeers } from "../support/go-peers.js";
import { tempDir } from "../support/temp.js";
import { drive, exampleCommand, goMessage } from "./drive.js";
import { runPeer } from "./support.js";

/**
 * One handlers object, two homes: the device injector's handlers run as their own process
 * against the Go runtime (pkg/adaptation v0.12.5, through `nri-peer drive`) and as a builtin
 * plugin inside NriRuntime's process; the merged adjustments must be the same.
 */

const { hasGo, bin: go } = useGoPeers({ "v0.12.5": nriPeer("nri-peer-drive", "v0.12.5") });

const CTR = "demo-ctr";
const podAnnotations = {
  [`devices.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ path: "/dev/nri-null", type: "c", major: 1, minor: 3, fileMode: 0o666, uid: 0, gid: 0 }]),
  [`cdi-devices.nri-wire.dev/container.${CTR}`]: JSON.stringify(["vendor.com/device=one"]),
  [`mounts.nri-wire.dev/container.${CTR}`]: JSON.stringify([{ source: "/var/lib/shared/data", destination: "/data", type: "bind", options: ["rbind", "ro"] }]),
};

describe("the same handlers in-process and as a process", () => {
  it.skipIf(!hasGo)("device-injector: the builtin plugin's merged adjustment is the Go runtime's for the plugin process", async () => {
    const d = await drive(go["v0.12.5"], { podAnnotations }, (socket) => runPeer(exampleCommand("device-injector"), ["--socket", socket]));
    expect(d.code, d.stderr).toBe(0);
    const asProcess = goMessage(ContainerAdjustmentSchema, d.event("CreateContainer").adjust);

    const runtime = new NriRuntime({ name: "t", version: "0", socketPath: false, pluginPath: tempDir(), builtinPlugins: [{ idx: "10", name: "device-injector", handlers: deviceInjector() }] });
    await runtime.start();
    try {
      const res = await runtime.createContainer(create(CreateContainerRequestSchema, { pod: { id: "pod-1", name: "demo-pod", annotations: podAnnotations }, container: { id: "ctr-1", podSandboxId: "pod-1", name: CTR } }));
      const inProcess = goMessage(ContainerAdjustmentSchema, toJson(ContainerAdjustmentSchema, res.adjust ?? create(ContainerAdjustmentSchema)));
      expect(inProcess).toEqual(asProcess);
      expect(JSON.stringify(inProcess)).toContain("/dev/nri-null");
    } finally {
      await runtime.stop();
    }
  });
});
