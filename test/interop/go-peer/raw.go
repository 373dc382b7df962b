package main

// Raw payloads through ttrpc's protobuf-only codec.
//
// ttrpc v1.2.10 hands every request, response and stream message to
// proto.Marshal / proto.Unmarshal, which accept only proto.Message values.
// The peer contract wants the payload bytes verbatim, with no protobuf
// wrapper. Raw is a proto.Message whose reflection view declares the fast
// path methods (Size, Marshal, Unmarshal, CheckInitialized); the protobuf
// runtime always prefers those, so the "encoding" of a Raw is exactly its
// bytes and "decoding" copies whatever bytes arrive, valid protobuf or not.
// The reflective accessors are never reached on those paths; they describe
// a message with no fields.

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/runtime/protoiface"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Raw carries an opaque payload.
type Raw struct {
	B []byte
}

// NewRaw wraps b (not copied).
func NewRaw(b []byte) *Raw { return &Raw{B: b} }

// ProtoReflect implements proto.Message.
func (r *Raw) ProtoReflect() protoreflect.Message { return (*rawView)(r) }

// Reset is used by proto.Unmarshal before decoding into r.
func (r *Raw) Reset() { r.B = nil }

var _ proto.Message = (*Raw)(nil)

// rawDesc describes an empty message nriwire.peer.RawBytes; it exists only
// so that Descriptor() and Type() have something truthful to return.
var rawDesc = func() protoreflect.MessageDescriptor {
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("nriwire/peer/raw.proto"),
		Package:     proto.String("nriwire.peer"),
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("RawBytes")}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		panic(fmt.Sprintf("raw descriptor: %v", err))
	}
	return fd.Messages().Get(0)
}()

type rawType struct{}

func (rawType) New() protoreflect.Message                  { return (&Raw{}).ProtoReflect() }
func (rawType) Zero() protoreflect.Message                 { return (*Raw)(nil).ProtoReflect() }
func (rawType) Descriptor() protoreflect.MessageDescriptor { return rawDesc }

// rawView is the protoreflect.Message face of a *Raw.
type rawView Raw

func (v *rawView) raw() *Raw                                                         { return (*Raw)(v) }
func (v *rawView) Descriptor() protoreflect.MessageDescriptor                        { return rawDesc }
func (v *rawView) Type() protoreflect.MessageType                                    { return rawType{} }
func (v *rawView) New() protoreflect.Message                                         { return (&Raw{}).ProtoReflect() }
func (v *rawView) Interface() protoreflect.ProtoMessage                              { return v.raw() }
func (v *rawView) Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool) {}
func (v *rawView) Has(protoreflect.FieldDescriptor) bool                             { return false }
func (v *rawView) Clear(protoreflect.FieldDescriptor)                                { noField() }
func (v *rawView) Get(protoreflect.FieldDescriptor) protoreflect.Value {
	noField()
	return protoreflect.Value{}
}
func (v *rawView) Set(protoreflect.FieldDescriptor, protoreflect.Value) { noField() }
func (v *rawView) Mutable(protoreflect.FieldDescriptor) protoreflect.Value {
	noField()
	return protoreflect.Value{}
}
func (v *rawView) NewField(protoreflect.FieldDescriptor) protoreflect.Value {
	noField()
	return protoreflect.Value{}
}
func (v *rawView) WhichOneof(protoreflect.OneofDescriptor) protoreflect.FieldDescriptor {
	return nil
}
func (v *rawView) GetUnknown() protoreflect.RawFields { return nil }
func (v *rawView) SetUnknown(protoreflect.RawFields)  {}
func (v *rawView) IsValid() bool                      { return v != nil }
func (v *rawView) ProtoMethods() *protoiface.Methods  { return &rawMethods }

func noField() { panic("nriwire.peer.RawBytes has no fields") }

func viewOf(m protoreflect.Message) *Raw { return m.(*rawView).raw() }

var rawMethods = protoiface.Methods{
	Flags: protoiface.SupportMarshalDeterministic | protoiface.SupportUnmarshalDiscardUnknown,
	Size: func(in protoiface.SizeInput) protoiface.SizeOutput {
		return protoiface.SizeOutput{Size: len(viewOf(in.Message).B)}
	},
	Marshal: func(in protoiface.MarshalInput) (protoiface.MarshalOutput, error) {
		return protoiface.MarshalOutput{Buf: append(in.Buf, viewOf(in.Message).B...)}, nil
	},
	Unmarshal: func(in protoiface.UnmarshalInput) (protoiface.UnmarshalOutput, error) {
		// The caller may recycle in.Buf (ttrpc pools its read buffers), so
		// copy. Appending gives protobuf merge semantics after a Reset.
		r := viewOf(in.Message)
		r.B = append(r.B, in.Buf...)
		return protoiface.UnmarshalOutput{Flags: protoiface.UnmarshalInitialized}, nil
	},
	CheckInitialized: func(protoiface.CheckInitializedInput) (protoiface.CheckInitializedOutput, error) {
		return protoiface.CheckInitializedOutput{}, nil
	},
}
