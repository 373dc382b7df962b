/**
 * nri-wire/testing: the runtime side for plugin authors' tests. `TestRuntime` is an in-process
 * runtime whose events resolve with the plugins' answers merged as the Go runtime merges them;
 * `handlerContext` builds the second argument of a handler called directly; `runConformance` is the
 * suite behind `nri-wire test-plugin`; `sessionView` the page of `nri-wire view`.
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
export { type AnswerRecord, CHECKS, type CheckId, type CheckResult, type ConformanceOptions, type ConformanceReport, type Failure, type DialectReport, runConformance } from "./conformance.js";
export { type Expectation, type Expectations, type MatchMode, parseExpectations } from "./expectations.js";
export { sessionView } from "./session-view.js";
export { DEFAULT_SCENARIO, type OtherPlugin, type Scenario, parseScenario } from "./scenario.js";
export { type PluginInstance, type PluginStarter, launchStarter, socketStarter } from "./plugin-starter.js";
export { DIALECTS, type Dialect } from "../api/revision.js";
