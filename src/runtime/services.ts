import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import { services_v1alpha1_api } from "../../gen/v1alpha1/api_lite.js";
import type { Runtime as AlphaRuntime } from "../../gen/v1alpha1/api_pb.js";
import { services_v1beta1_api } from "../../gen/v1beta1/api_lite.js";
import type { Plugin, Runtime as BetaRuntime } from "../../gen/v1beta1/api_pb.js";
import { RpcError } from "../ttrpc/errors.js";
import type { RawMethod } from "../ttrpc/server.js";
import { Code } from "../ttrpc/status.js";
import type { GeneratedMessage } from "../wire/generated.js";
import { messages } from "./messages.js";
import { errorText } from "../internal/error-text.js";

/*
 * The services the runtime side calls and serves, from the generated method tables and codecs:
 * typed as the protoc-gen-es services declare them, but without loading those modules, their
 * descriptors or @bufbuild/protobuf's registry (which would be most of the runtime's heap).
 */

/** A unary method: its wire name and the generated code of its request and response. */
export interface UnaryMethod<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> {
  readonly name: string;
  readonly input: GeneratedMessage<I>;
  readonly output: GeneratedMessage<O>;
}

/** A service's methods by local name (`createContainer`), typed from its protoc-gen-es declaration. */
export type ServiceMethods<M extends GenServiceMethods> = { readonly [K in keyof M]: UnaryMethod<M[K]["input"], M[K]["output"]> };

/** A generated method table (`services_v1beta1_api.Plugin`): names only. */
interface MethodTable {
  readonly methods: readonly { readonly name: string; readonly localName: string; readonly input: string; readonly output: string }[];
}

function generated(typeName: string): GeneratedMessage {
  const g = messages.generated(typeName);
  if (g === undefined) throw new Error(`nri: no generated code for ${typeName}`);
  return g;
}

function methodsOf<M extends GenServiceMethods>(table: MethodTable): ServiceMethods<M> {
  const out: Record<string, UnaryMethod> = {};
  for (const m of table.methods) out[m.localName] = { name: m.name, input: generated(m.input), output: generated(m.output) };
  return out as ServiceMethods<M>;
}

/** The v1beta1 Plugin service, which the runtime side calls. */
export const pluginService: ServiceMethods<(typeof Plugin)["method"]> = methodsOf(services_v1beta1_api.Plugin);
/** The v1beta1 Runtime service, which the runtime side serves. */
export const betaRuntimeService: ServiceMethods<(typeof BetaRuntime)["method"]> = methodsOf(services_v1beta1_api.Runtime);
/** The v1alpha1 Runtime service, served to plugins of upstream releases. */
export const alphaRuntimeService: ServiceMethods<(typeof AlphaRuntime)["method"]> = methodsOf(services_v1alpha1_api.Runtime);

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
        throw new RpcError(Code.INVALID_ARGUMENT, errorText(e), { cause: e });
      }
      return method.output.encode(await handler(request));
    },
  };
}
