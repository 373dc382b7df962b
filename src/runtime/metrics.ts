import type { ContainerAdjustment } from "../../gen/v1beta1/api_lite.js";
import type { Logger } from "../api/logger.js";
import { errorText } from "../internal/error-text.js";

/**
 * Hooks that record what the runtime's plugins do, the four of containerd/nri v0.12.5's
 * `adaptation.Metrics` with the same meaning, arguments and call points (containerd turns them
 * into its `containerd_nri_*` metrics), and three more. All are optional and called
 * synchronously: keep them quick.
 */
export interface RuntimeMetrics {
  /**
   * Once per call to a plugin of an event, a validation or a Synchronize page (not Configure or
   * Shutdown): `err` is undefined for an answer, else the failure with Go's text
   * (`context deadline exceeded`, `rpc error: code = Unknown desc = ...`). Go's RecordPluginInvocation.
   */
  recordPluginInvocation?(pluginName: string, operation: string, err: Error | undefined): void;
  /** The same calls' time, in milliseconds, before recordPluginInvocation. Go's RecordPluginLatency. */
  recordPluginLatency?(pluginName: string, operation: string, latencyMs: number): void;
  /**
   * After each answer of CreateContainer (its adjustment, updates and evictions), UpdateContainer
   * (updates, evictions), StopContainer and each Synchronize page (updates). Go's RecordPluginAdjustments.
   */
  recordPluginAdjustments?(pluginName: string, operation: string, adjust: ContainerAdjustment | undefined, updates: number, evicts: number): void;
  /**
   * The number of plugins in the list: at the end of every event, once the plugins have started,
   * and twice when a plugin joins (as Go calls it). Go's UpdatePluginCount.
   */
  updatePluginCount?(count: number): void;
  /** A plugin the failure policy closed (a timeout, a lost connection): `operation` is the call it failed. */
  recordPluginDrop?(pluginName: string, operation: string, err: Error): void;
  /** A validator refused a CreateContainer's adjustment; `reason` is its rejection's text. */
  recordValidationRefusal?(pluginName: string, reason: string): void;
  /** A plugin's answer the merge refused (two plugins setting one field, an update during creation). */
  recordMergeConflict?(pluginName: string, operation: string, err: Error): void;
}

const HOOKS = ["recordPluginInvocation", "recordPluginLatency", "recordPluginAdjustments", "updatePluginCount", "recordPluginDrop", "recordValidationRefusal", "recordMergeConflict"] as const;

/**
 * The hooks the runtime calls: each of `all` in turn, a hook that throws logged (once per hook)
 * and never failing the event; undefined when there are none, so that calls are not measured.
 */
export function runtimeMetrics(all: readonly (RuntimeMetrics | undefined)[], log: Logger): RuntimeMetrics | undefined {
  const list = all.filter((m): m is RuntimeMetrics => m !== undefined);
  if (list.length === 0) return undefined;
  const out: Record<string, (...args: never[]) => void> = {};
  for (const hook of HOOKS) {
    const fns = list.filter((m) => typeof m[hook] === "function").map((m) => [m, m[hook] as (...args: unknown[]) => void] as const);
    if (fns.length === 0) continue;
    let reported = false;
    out[hook] = (...args: never[]): void => {
      for (const [m, f] of fns) {
        try {
          f.apply(m, args);
        } catch (e) {
          if (!reported) log.error(`nri: metrics hook ${hook} failed: ${errorText(e)}`);
          reported = true;
        }
      }
    };
  }
  return out as RuntimeMetrics;
}
