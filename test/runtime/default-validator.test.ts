import { fromJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ValidateContainerAdjustmentRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { defaultValidator, type DefaultValidatorConfig, effectiveAnnotation } from "../../src/runtime/default-validator.js";

/** The reason the default validator gives for a request in protobuf JSON, or undefined. */
function reason(config: DefaultValidatorConfig, json: object): string | undefined {
  const rpl = defaultValidator(config)(fromJson(ValidateContainerAdjustmentRequestSchema, json as never));
  expect(rpl.reject).toBe(rpl.reason !== "");
  return rpl.reject ? rpl.reason : undefined;
}

const owners = (ctr: object) => ({ owners: { ctr0: ctr } });
const base = (extra: object = {}) => ({ container: { id: "ctr0", name: "c" }, adjust: {}, ...extra });

describe("default validator", () => {
  it("rejects OCI hooks by one plugin or several", () => {
    expect(reason({ rejectOCIHookAdjustment: true }, base({ owners: owners({ simple: { 3: "10-a" } }) }))).toBe('validation error: plugin "10-a" attempted restricted OCI hook injection');
    expect(reason({ rejectOCIHookAdjustment: true }, base({ owners: owners({ simple: { 3: "10-a,20-b" } }) }))).toBe('validation error: plugins "10-a,20-b" attempted restricted OCI hook injection');
    expect(reason({}, base({ owners: owners({ simple: { 3: "10-a" } }) }))).toBeUndefined();
  });

  it("checks nothing but required plugins without an adjustment", () => {
    const json = { container: { id: "ctr0" }, owners: owners({ simple: { 3: "10-a", 32: "10-a" } }) };
    expect(reason({ rejectOCIHookAdjustment: true, rejectUnconfinedSeccompAdjustment: true, rejectNamespaceAdjustment: true, rejectSysctlAdjustment: true }, json)).toBeUndefined();
    expect(reason({ requiredPlugins: ["x"] }, json)).toBe('validation error: required plugin "x" not present');
  });

  it("rejects seccomp policy adjustments by the container's profile type, with upstream's double spaces", () => {
    const req = (profileType?: string) => base({ owners: owners({ simple: { 32: "10-a" } }), container: { id: "ctr0", linux: profileType === undefined ? {} : { seccompProfile: { profileType } } } });
    const all = { rejectUnconfinedSeccompAdjustment: true, rejectRuntimeDefaultSeccompAdjustment: true, rejectCustomSeccompAdjustment: true };
    expect(reason(all, req())).toBe("validation error: plugin 10-a attempted restricted  unconfined seccomp policy adjustment");
    expect(reason(all, req("UNCONFINED"))).toBe("validation error: plugin 10-a attempted restricted  unconfined seccomp policy adjustment");
    expect(reason(all, req("RUNTIME_DEFAULT"))).toBe("validation error: plugin 10-a attempted restricted runtime default seccomp policy adjustment");
    expect(reason(all, req("LOCALHOST"))).toBe("validation error: plugin 10-a attempted restricted  custom seccomp policy adjustment");
    expect(reason({ rejectUnconfinedSeccompAdjustment: true }, req("LOCALHOST"))).toBeUndefined();
  });

  it("rejects namespace adjustments naming every owner in namespace-type order", () => {
    const json = base({ owners: owners({ compound: { 33: { owners: { uts: "30-c", ipc: "20-b", net: "10-a" } } } }) });
    expect(reason({ rejectNamespaceAdjustment: true }, json)).toBe(
      'validation error: attempted restricted namespace adjustment by plugin(s) "20-b" (namespace "ipc"), "10-a" (namespace "net"), "30-c" (namespace "uts")',
    );
  });

  it("rejects sysctl adjustments naming the owners of the reply's keys in key order", () => {
    const json = base({ adjust: { linux: { sysctl: { "net.b": "1", "net.a": "1", "-net.c": "" } } }, owners: owners({ compound: { 34: { owners: { "net.a": "20-b", "net.b": "10-a", "net.c": "-30-c" } } } }) });
    expect(reason({ rejectSysctlAdjustment: true }, json)).toBe("validation error: attempted restricted sysctl adjustment by plugin(s) 20-b, 10-a");
  });

  it("requires plugins from the configuration and the annotations, by name or idx-name", () => {
    const plugins = [{ name: "a", index: "10" }, { name: "b", index: "20" }];
    expect(reason({ requiredPlugins: ["a", "20-b"] }, base({ plugins }))).toBeUndefined();
    expect(reason({ requiredPlugins: ["10-b"] }, base({ plugins }))).toBe('validation error: required plugin "10-b" not present');
    expect(reason({ requiredPlugins: ["x"] }, base({ plugins, pod: { annotations: { "required-plugins.noderesource.dev/container.c": "[y, a]" } } }))).toBe(
      'validation error: required plugins "x,y" not present',
    );
  });

  it("reports unreadable annotations with Go's texts", () => {
    const pod = (annotations: Record<string, string>) => base({ pod: { annotations } });
    expect(reason({ requiredPlugins: ["x"], tolerateMissingPluginsAnnotation: "t" }, pod({ "t/pod": "nah" }))).toBe('invalid t annotation "nah": strconv.ParseBool: parsing "nah": invalid syntax');
    expect(reason({ requiredPlugins: ["x"], tolerateMissingPluginsAnnotation: "t" }, pod({ t: "1" }))).toBeUndefined();
    expect(reason({}, pod({ "required-plugins.noderesource.dev": "true" }))).toBe(
      'invalid required-plugins.noderesource.dev annotation "true": yaml: unmarshal errors:\n  line 1: cannot unmarshal !!bool `true` into []string',
    );
  });

  it("finds annotations container first, then pod, then unscoped", () => {
    const pod = { annotations: { k: "3", "k/pod": "2", "k/container.c": "1" } } as never;
    expect(effectiveAnnotation(pod, "k", "c")).toBe("1");
    expect(effectiveAnnotation(pod, "k", "d")).toBe("2");
    expect(effectiveAnnotation({ annotations: { k: "3" } } as never, "k", "d")).toBe("3");
    expect(effectiveAnnotation(undefined, "k", "d")).toBeUndefined();
  });
});
