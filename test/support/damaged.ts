import fc from "fast-check";
import { type DescMessage, type Message, toBinary } from "@bufbuild/protobuf";

/**
 * Valid encodings of `messages` with one to four bytes changed, inserted or removed. Positions
 * are taken modulo the current length, so an empty encoding (Empty) gets inserts.
 */
export function damagedEncodings(schema: DescMessage, messages: fc.Arbitrary<Message>): fc.Arbitrary<Uint8Array> {
  const edit = fc.tuple(fc.constantFrom("set", "insert", "delete"), fc.nat(), fc.integer({ min: 0, max: 255 }));
  return fc.tuple(messages, fc.array(edit, { minLength: 1, maxLength: 4 })).map(([m, edits]) => {
    const bytes = [...toBinary(schema, m)];
    for (const [op, at, v] of edits) {
      if (op === "insert" || bytes.length === 0) bytes.splice(at % (bytes.length + 1), 0, v);
      else if (op === "set") bytes[at % bytes.length] = v;
      else bytes.splice(at % bytes.length, 1);
    }
    return Uint8Array.from(bytes);
  });
}
