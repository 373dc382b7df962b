/** Protobuf wire types: the low three bits of a field's tag. */
export enum WireType {
  Varint = 0,
  Fixed64 = 1,
  Bytes = 2,
  StartGroup = 3,
  EndGroup = 4,
  Fixed32 = 5,
}
