import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { services_v1alpha1_api } from "../../gen/v1alpha1/api_lite.js";
import type { Runtime as AlphaRuntime } from "../../gen/v1alpha1/api_pb.js";
import { services_v1beta1_api } from "../../gen/v1beta1/api_lite.js";
import type { Plugin, Runtime as BetaRuntime } from "../../gen/v1beta1/api_pb.js";
import type { RawMethod } from "../ttrpc/server.js";
import { undecodable } from "../ttrpc/typed.js";
import { messages } from "./messages.js";
import { type ServiceMethods, type UnaryMethod, serviceMethods } from "../api/services.js";

/*
 * The services the runtime side calls and serves, built from the generated tables of both
 * revisions (the plugin side builds its Plugin service the same way).
 */

/** The v1beta1 Plugin service, which the runtime side calls. */
export const pluginService: ServiceMethods<(typeof Plugin)["method"]> = serviceMethods(messages, services_v1beta1_api.Plugin);
/** The v1beta1 Runtime service, which the runtime side serves. */
export const betaRuntimeService: ServiceMethods<(typeof BetaRuntime)["method"]> = serviceMethods(messages, services_v1beta1_api.Runtime);
/** The v1alpha1 Runtime service, served to plugins of upstream releases. */
export const alphaRuntimeService: ServiceMethods<(typeof AlphaRuntime)["method"]> = serviceMethods(messages, services_v1alpha1_api.Runtime);

/**
 * A served unary method: the request decoded strictly (bytes that do not decode are
 * INVALID_ARGUMENT with the decoder's text, which names the message and field), the handler's
 * answer (a message or an init object) encoded.
 */
export function unary<I extends DescMessage, O extends DescMessage>(
  method: UnaryMethod<I, O>,
  handler: (request: MessageShape<I>) => MessageInitShape<O> | Promise<MessageInitShape<O>>,
): RawMethod {
  return {
    kind: "unary",
    handler: async (payload) => {
      let request: MessageShape<I>;
      try {
        request = method.input.decode(payload);
      } catch (e) {
        throw undecodable(e);
      }
      return method.output.encode(await handler(request));
    },
  };
}
