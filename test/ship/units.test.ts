import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pluginHandlersOf } from "../../src/ship/plugin-entry.js";
import { markRegistered, markUnregistered, probe, stateFile } from "../../src/ship/readiness.js";
import { socketProblem } from "../../src/ship/socket-check.js";
import { daemonSetYaml, objectName } from "../../src/ship/manifests.js";
import { tempDir } from "../support/temp.js";

const dir = tempDir("nriw-ship-units-");

describe("the entry's plugin", () => {
  it("is the default export's handlers; anything else is named", () => {
    const h = { createContainer: () => undefined };
    expect(pluginHandlersOf({ default: h })).toBe(h);
    expect(() => pluginHandlersOf({ handlers: h })).toThrow("exports no plugin: its default export must be an object of plugin handlers (such as createContainer)");
    expect(() => pluginHandlersOf({ default: () => h })).toThrow("default export is a function, not an object of plugin handlers (such as createContainer)");
    expect(() => pluginHandlersOf({ default: null })).toThrow("default export is null, not an object of plugin handlers (such as createContainer)");
    expect(() => pluginHandlersOf({ default: [h] })).toThrow("default export is an array, not an object of plugin handlers (such as createContainer)");
    expect(() => pluginHandlersOf({ default: {} })).toThrow("default export has no plugin handler (such as createContainer)");
    expect(() => pluginHandlersOf({ default: { createContainer: "yes" } })).toThrow('default export: handler "createContainer" is a string, not a function');
    expect(() => pluginHandlersOf({ default: { onCreate: () => undefined } })).toThrow(/^default export: unknown handler "onCreate": the handlers are configure, synchronize, shutdown, runPodSandbox, /);
    expect(() => pluginHandlersOf({ default: { createContainr: () => undefined } })).toThrow('default export: unknown handler "createContainr": did you mean "createContainer"?');
  });
});

describe("readiness", () => {
  it("is registered while this process's state file exists, not when it is missing or names a process that is gone", () => {
    const file = stateFile(dir);
    expect(probe(file)).toEqual({ ready: false, line: `not registered: no state file ${file}` });
    markRegistered(file, "containerd v2.4.2");
    expect(probe(file)).toEqual({ ready: true, line: `registered with containerd v2.4.2 (pid ${process.pid})` });
    // A file left by an earlier process whose PID now names another (or none).
    writeFileSync(file, JSON.stringify({ pid: process.pid, started: "1", runtime: "containerd v2.4.2" }));
    expect(probe(file)).toEqual({ ready: false, line: `not registered: state file ${file} names process ${process.pid}, which is gone` });
    markUnregistered(file);
    expect(probe(file).ready).toBe(false);
  });
});

describe("the socket check", () => {
  it("names a missing socket, a path that is no socket, and accepts a listening one", async () => {
    const missing = join(dir, "missing.sock");
    expect(socketProblem(missing)).toBe(`socket ${missing}: missing (is NRI enabled in the runtime, and its socket directory mounted?)`);
    const file = join(dir, "file");
    writeFileSync(file, "");
    expect(socketProblem(file)).toBe(`socket ${file}: not a socket`);
    const path = join(dir, "ok.sock");
    const server = createServer();
    await new Promise<void>((r) => server.listen(path, r));
    expect(socketProblem(path)).toBeUndefined();
    await new Promise((r) => server.close(r));
  });
});

describe("Kubernetes object names", () => {
  it("are DNS labels made from the plugin name", () => {
    expect(objectName("adjuster")).toBe("nri-plugin-adjuster");
    expect(objectName("My_Plugin+v2")).toBe("nri-plugin-my-plugin-v2");
    expect(objectName("x".repeat(80))).toHaveLength(63);
  });
});

describe("the DaemonSet", () => {
  const spec = { name: "adjuster", idx: "10", version: "0.1.0", image: { repository: "localhost/nri-wire/adjuster", tag: "0.1.0" } };

  it("runs the image by its full name, hardened, ready once registered (a startup probe every second, then readiness every 10 s)", () => {
    const yaml = daemonSetYaml({ ...spec, command: ["/10-adjuster"] });
    expect(yaml).toContain('image: "localhost/nri-wire/adjuster:0.1.0"');
    expect(yaml).toContain("automountServiceAccountToken: false\n      enableServiceLinks: false\n      securityContext:\n        seccompProfile:\n          type: RuntimeDefault\n");
    const probe = '            exec:\n              command:\n                - "/10-adjuster"\n                - "probe"\n                - "--state"\n                - "/run/nri-plugin"\n';
    expect(yaml).toContain(`          startupProbe:\n${probe}            periodSeconds: 1\n            failureThreshold: 600\n            timeoutSeconds: 5\n`);
    expect(yaml).toContain(`          readinessProbe:\n${probe}            periodSeconds: 10\n            failureThreshold: 1\n            timeoutSeconds: 5\n`);
    expect(yaml).toContain("            - --socket\n            - /var/run/nri/nri.sock\n");
  });

  it("probes through the engine when the plugin runs with Node options (a #! line passes one argument)", () => {
    const yaml = daemonSetYaml({ ...spec, command: ["/usr/local/bin/node", "--max-semi-space-size=1", "--single-threaded", "/10-adjuster"] });
    expect(yaml).toContain('              command:\n                - "/usr/local/bin/node"\n                - "--max-semi-space-size=1"\n                - "--single-threaded"\n                - "/10-adjuster"\n                - "probe"\n');
  });
});
