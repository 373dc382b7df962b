import type { CreateContainerRequest, ValidateContainerAdjustmentRequest, ValidateContainerAdjustmentResponse } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { clone } from "../api/messages.js";
import { type CreateContainerResult, fillCreateRequest } from "./create-result.js";
import { AdaptationError } from "./errors.js";
import { make } from "./make.js";
import { goQuote } from "../internal/go-quote.js";

/**
 * Starts the request validators receive for a CreateContainer event: the pod (shared) and a clone
 * of the container as the runtime sent it, before any plugin adjusted it, with the empty parts
 * Go fills in first. Call it before the first `CreateContainerResult.apply`; Go builds it only
 * when at least one validator exists at the start of the event.
 */
export function validationRequest(request: CreateContainerRequest): ValidateContainerAdjustmentRequest {
  const container = clone(v1beta1.Container, fillCreateRequest(request));
  const req = make(v1beta1.ValidateContainerAdjustmentRequest, { container });
  if (request.pod !== undefined) req.pod = request.pod;
  return req;
}

/**
 * Lists a plugin taking part in the event. Go lists every plugin of the event's loop that is not
 * closed, in invocation order, before calling it: validators, plugins not subscribed to
 * CreateContainer and plugins that then fail or time out included.
 */
export function addValidationPlugin(req: ValidateContainerAdjustmentRequest, idx: string, name: string): void {
  req.plugins.push(make(v1beta1.PluginInstance, { name, index: idx }));
}

/** Completes the request with the merged adjustment, the updates and every ownership record. */
export function completeValidationRequest(req: ValidateContainerAdjustmentRequest, result: CreateContainerResult): void {
  const rpl = result.response();
  if (rpl.adjust !== undefined) req.adjust = rpl.adjust;
  req.update = rpl.update;
  req.owners = result.owners();
}

/**
 * Go's verdict for one validator's answer (`validator` is its `idx-name`): nothing when it
 * accepts, otherwise the rejection error with Go's text (an empty reason reads
 * `unknown rejection reason`).
 */
export function validationRejection(validator: string, response: ValidateContainerAdjustmentResponse): AdaptationError | undefined {
  if (!response.reject) return undefined;
  const reason = response.reason === "" ? "unknown rejection reason" : response.reason;
  return new AdaptationError(`validator ${goQuote(validator)} rejected container adjustment, reason: ${reason}`);
}

/** Throws `validationRejection`'s error when the validator rejected. */
export function checkValidation(validator: string, response: ValidateContainerAdjustmentResponse): void {
  const err = validationRejection(validator, response);
  if (err !== undefined) throw err;
}

/**
 * Go's text for a validator whose call failed (an error or a timeout rather than a verdict): the
 * event fails whatever the validator's failure policy. `cause` is the call error's text, e.g.
 * `context deadline exceeded`.
 */
export function validatorFailure(validator: string, cause: string): AdaptationError {
  return new AdaptationError(`validator plugin ${validator} failed: ${cause}`);
}
