/**
 * nri-wire/testing: the runtime side for plugin authors' tests. `TestRuntime` is an in-process
 * runtime whose events resolve with the plugins' answers merged as the Go runtime merges them;
 * `handlerContext` builds the second argument of a handler called directly; `runConformance` is the
 * suite behind `nri-wire test-plugin`.
 */
export {
  type ReceivedUpdate,
  type TestContainer,
  type TestPluginOptions,
  type TestPod,
  type TestRequest,
  TestRuntime,
  type TestRuntimeOptions,
} from "./test-runtime.js";
export { type HandlerContextInit, handlerContext } from "./handler-context.js";
export { CHECKS, type CheckId, type CheckResult, type ConformanceOptions, type ConformanceReport, type Failure, type DialectReport, runConformance } from "./conformance.js";
export { sessionView } from "./session-view.js";
export { DEFAULT_SCENARIO, type Scenario, parseScenario } from "./scenario.js";
export { type PluginInstance, type PluginStarter, launchStarter, socketStarter } from "./plugin-starter.js";
export { DIALECTS, type Dialect } from "../api/revision.js";
