import { createRequire } from "node:module";
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { realSchema } from "./lazy.js";
import { generatedMessage, isMessageOf } from "./registry.js";

let protobuf: typeof import("@bufbuild/protobuf") | undefined;

/**
 * @bufbuild/protobuf, loaded on first need with require() (its CommonJS build: its functions
 * take any schema object), for messages no generated code covers.
 */
export function reflective(): typeof import("@bufbuild/protobuf") {
  return (protobuf ??= createRequire(import.meta.url)("@bufbuild/protobuf") as typeof import("@bufbuild/protobuf"));
}

/**
 * `create()` of @bufbuild/protobuf, through the generated code when the schema's codec module is
 * loaded (no descriptor needed, the same message), reflectively otherwise. A message of the
 * schema is returned as it is.
 */
export function create<Desc extends DescMessage>(schema: Desc, init?: MessageInitShape<Desc>): MessageShape<Desc> {
  if (isMessageOf(init, schema.typeName)) return init as MessageShape<Desc>;
  const generated = generatedMessage(schema.typeName);
  if (generated !== undefined) return generated.create(init) as MessageShape<Desc>;
  return reflective().create(realSchema(schema), init);
}
