import type { FailurePolicy } from "../../gen/v1beta1/api_lite.js";
import { EventError, type PluginCallError } from "./errors.js";
import type { Logger } from "../api/logger.js";
import { validatorFailure } from "./validation.js";

/** What the failure policy needs of a plugin. */
export interface PolicySubject {
  readonly id: string;
  readonly policy: FailurePolicy | undefined;
  close(): void;
}

/**
 * Whether a failed call costs the plugin its place: every fatal failure does (no answer, a lost
 * connection, a protocol error), except a timeout when the plugin asked to be kept connected.
 */
export function dropsPlugin(plugin: PolicySubject, err: PluginCallError): boolean {
  if (!err.fatal) return false;
  return err.failure !== "deadline" || !(plugin.policy?.keepConnected ?? false);
}

/**
 * The reference's handling of a failed event call. An error the plugin answered with, a bad
 * answer, or a canceled event fails the event unchanged and the plugin stays. A fatal failure
 * closes the plugin unless dropsPlugin says otherwise, and then fails the event only if the
 * plugin's policy says fail_request; otherwise the event goes on as if the plugin had not been
 * there (undefined is returned).
 */
export function handleRequestError(plugin: PolicySubject, event: string, err: PluginCallError, log: Logger): EventError | undefined {
  if (!err.fatal) return new EventError(err.message, event, plugin.id, { cause: err });
  if (dropsPlugin(plugin, err)) {
    log.error(`closing plugin ${plugin.id}, failed to handle ${event} request: ${err.message}`);
    plugin.close();
  }
  if (!(plugin.policy?.failRequest ?? false)) {
    log.warn(`plugin ${plugin.id} failed to handle ${event} request, proceeding without it: ${err.message}`);
    return undefined;
  }
  return new EventError(`plugin ${plugin.id} failed to handle ${event} request: ${err.message}`, event, plugin.id, { cause: err });
}

/**
 * A validator's failure: always fails the event, whatever the policy's fail_request; the
 * plugin is dropped as for any other call.
 */
export function handleValidatorError(plugin: PolicySubject, err: PluginCallError, log: Logger): EventError {
  if (dropsPlugin(plugin, err)) {
    log.error(`closing plugin ${plugin.id}, failed to handle ValidateContainerAdjustment request: ${err.message}`);
    plugin.close();
  }
  return new EventError(validatorFailure(plugin.id, err.message).message, "CreateContainer", plugin.id, { cause: err });
}
