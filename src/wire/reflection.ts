import { clone, create, fromBinary, toBinary } from "@bufbuild/protobuf";

/**
 * The reflective functions of @bufbuild/protobuf a MessageRegistry falls back to for messages
 * without generated code: the package's ES module build, the one protoc-gen-es modules import, so
 * a process holds one copy. Importing this module loads the package; a program that only uses
 * generated code builds its registry without it.
 */
export interface Reflection {
  /** protobuf-es create(). */
  readonly create: typeof create;
  /** protobuf-es clone(). */
  readonly clone: typeof clone;
  /** protobuf-es toBinary(). */
  readonly toBinary: typeof toBinary;
  /** protobuf-es fromBinary(). */
  readonly fromBinary: typeof fromBinary;
}

/** The reflective fallback of @bufbuild/protobuf. */
export const reflection: Reflection = { create, clone, toBinary, fromBinary };
