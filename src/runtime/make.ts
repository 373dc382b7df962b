import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { GeneratedMessage } from "../wire/generated.js";

/**
 * A message of `type` with `fields` assigned as they are: `create(type, init)` walks a nested
 * init object, several times slower than assigning parts that are already messages.
 */
export function make<Desc extends DescMessage>(type: GeneratedMessage<Desc>, fields: Partial<Omit<MessageShape<Desc>, "$typeName" | "$unknown">>): MessageShape<Desc> {
  return Object.assign(type.create(), fields);
}
