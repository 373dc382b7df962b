import type { DescMessage } from "@bufbuild/protobuf";
import type { GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import { services_v1beta1_api } from "../../gen/v1beta1/api_lite.js";
import type { Plugin, Runtime } from "../../gen/v1beta1/api_pb.js";
import type { GeneratedMessage } from "../wire/generated.js";
import type { MessageRegistry } from "../wire/registry.js";
import { messages } from "./messages.js";

/*
 * An NRI service as both endpoints call and serve it: from the generated method table (names
 * only) and the generated code of its messages, typed as the protoc-gen-es service declares it,
 * without loading that module, its descriptor or @bufbuild/protobuf.
 */

/** A unary method: its wire and local names and the generated code of its request and response. */
export interface UnaryMethod<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> {
  readonly name: string;
  readonly localName: string;
  readonly input: GeneratedMessage<I>;
  readonly output: GeneratedMessage<O>;
}

/** A service's methods by local name (`createContainer`), typed from its protoc-gen-es declaration. */
export type ServiceMethods<M extends GenServiceMethods> = { readonly [K in keyof M]: UnaryMethod<M[K]["input"], M[K]["output"]> };

/** A generated method table (`services_v1beta1_api.Plugin`). */
export interface MethodTable {
  readonly methods: readonly { readonly name: string; readonly localName: string; readonly input: string; readonly output: string }[];
}

/** The methods of `table` with the generated code `registry` holds for their messages. */
export function serviceMethods<M extends GenServiceMethods>(registry: MessageRegistry, table: MethodTable): ServiceMethods<M> {
  const code = (typeName: string): GeneratedMessage => {
    const g = registry.generated(typeName);
    if (g === undefined) throw new Error(`nri: no generated code for ${typeName}`);
    return g;
  };
  const out: Record<string, UnaryMethod> = {};
  for (const m of table.methods) out[m.localName] = { name: m.name, localName: m.localName, input: code(m.input), output: code(m.output) };
  return out as ServiceMethods<M>;
}

/** The v1beta1 Plugin service: the runtime side calls it, the plugin side serves it. */
export const pluginService: ServiceMethods<(typeof Plugin)["method"]> = serviceMethods(messages, services_v1beta1_api.Plugin);
/** The v1beta1 Runtime service: the plugin side calls it, the runtime side serves it. */
export const runtimeService: ServiceMethods<(typeof Runtime)["method"]> = serviceMethods(messages, services_v1beta1_api.Runtime);
