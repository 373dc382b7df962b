import { describe, expect, it } from "vitest";
import injector, { parseConfig, SELECTOR } from "../../examples/env-injector.js";

/** The handlers' requests, built as plain objects: only the fields the injector reads. */
const pod = (annotations: Record<string, string>) => ({ annotations }) as never;
const create = (annotations: Record<string, string>) => injector.createContainer({ pod: pod(annotations), container: { name: "c" } } as never);

describe("examples/env-injector", () => {
  it("parses its config; an empty text is an empty config", () => {
    expect(parseConfig(" \n")).toEqual({ env: {}, annotations: {}, pidsLimit: 0 });
    expect(parseConfig('{"env":{"A":"1"},"annotations":{"k":"v"},"pidsLimit":64}')).toEqual({ env: { A: "1" }, annotations: { k: "v" }, pidsLimit: 64 });
  });

  it("refuses a config with an unknown field, a non-string value or a bad pids limit, naming it", () => {
    expect(() => parseConfig('{"envs":{}}')).toThrow('env-injector: config: unknown field "envs"');
    expect(() => parseConfig('{"env":{"A":1}}')).toThrow('env-injector: config: "env" must map names to strings');
    expect(() => parseConfig('{"annotations":[1]}')).toThrow('env-injector: config: "annotations" must map names to strings');
    expect(() => parseConfig('{"pidsLimit":-1}')).toThrow("env-injector: config: pidsLimit -1 is not a non-negative integer");
    expect(() => parseConfig('{"pidsLimit":"5"}')).toThrow('env-injector: config: pidsLimit "5" is not a non-negative integer');
  });

  it("adjusts only containers of annotated pods, with the config Configure gave it", () => {
    injector.configure({ config: '{"env":{"A":"1"},"annotations":{"k":"v"},"pidsLimit":64}' } as never);
    expect(create({})).toBeUndefined();
    expect(create({ [SELECTOR]: "false" })).toBeUndefined();
    expect(create({ [SELECTOR]: "true" })).toEqual({ adjust: { env: [{ key: "A", value: "1" }], annotations: { k: "v" }, linux: { resources: { pids: { limit: 64 } } } } });
    injector.configure({ config: '{"env":{"B":"2"}}' } as never);
    expect(create({ [SELECTOR]: "true" })).toEqual({ adjust: { env: [{ key: "B", value: "2" }], annotations: {} } });
  });
});
