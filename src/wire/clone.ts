import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { reflective } from "./create.js";
import { realSchema } from "./lazy.js";
import { generatedMessage } from "./registry.js";

/**
 * `clone()` of @bufbuild/protobuf: a deep copy of `message`, through the generated code when the
 * schema's codec module is loaded (no descriptor walk, several times faster), reflectively
 * otherwise.
 */
export function clone<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): MessageShape<Desc> {
  const generated = generatedMessage(schema.typeName);
  if (generated !== undefined) return generated.clone(message as never) as MessageShape<Desc>;
  return reflective().clone(realSchema(schema), message);
}
