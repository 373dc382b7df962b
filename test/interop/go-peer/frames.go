package main

// Hand-made ttrpc frames and messages, for checks that need bytes a
// well-behaved ttrpc client never sends, and for looking at exactly what a
// server puts on the wire.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

const (
	frameRequest  = 0x1
	frameResponse = 0x2
	frameData     = 0x3

	flagRemoteClosed = 0x1
	flagRemoteOpen   = 0x2
	flagNoData       = 0x4

	maxFrameData = 4 << 20
)

type frame struct {
	Length   uint32
	StreamID uint32
	Type     byte
	Flags    byte
	Data     []byte
}

func (f frame) String() string {
	return fmt.Sprintf("frame{len=%d sid=%d type=%d flags=%#x}", f.Length, f.StreamID, f.Type, f.Flags)
}

type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(socket string) (*rawConn, error) {
	c, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c, br: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (r *rawConn) Close() error { return r.c.Close() }

func frameHeader(length, sid uint32, typ, flags byte) []byte {
	h := make([]byte, 10)
	binary.BigEndian.PutUint32(h[0:4], length)
	binary.BigEndian.PutUint32(h[4:8], sid)
	h[8] = typ
	h[9] = flags
	return h
}

// writeFrame sends one frame whose announced length is len(data).
func (r *rawConn) writeFrame(sid uint32, typ, flags byte, data []byte) error {
	r.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	buf := append(frameHeader(uint32(len(data)), sid, typ, flags), data...)
	_, err := r.c.Write(buf)
	return err
}

// writeRawBytes sends arbitrary bytes (e.g. a header announcing more data
// than a well-formed frame may carry).
func (r *rawConn) writeRawBytes(b []byte) error {
	r.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	_, err := r.c.Write(b)
	return err
}

var errNoFrame = errors.New("no frame before timeout")

// readFrame reads the next frame, or errNoFrame if none starts in time.
func (r *rawConn) readFrame(timeout time.Duration) (frame, error) {
	r.c.SetReadDeadline(time.Now().Add(timeout))
	var h [10]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return frame{}, errNoFrame
		}
		return frame{}, err
	}
	f := frame{
		Length:   binary.BigEndian.Uint32(h[0:4]),
		StreamID: binary.BigEndian.Uint32(h[4:8]),
		Type:     h[8],
		Flags:    h[9],
	}
	if f.Length > maxFrameData+1024 {
		return f, fmt.Errorf("absurd frame length %d", f.Length)
	}
	r.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	f.Data = make([]byte, f.Length)
	if _, err := io.ReadFull(r.br, f.Data); err != nil {
		return f, err
	}
	return f, nil
}

// readFrameOn reads frames until one for stream sid arrives, counting and
// dropping the others.
func (r *rawConn) readFrameOn(sid uint32, timeout time.Duration) (frame, int, error) {
	deadline := time.Now().Add(timeout)
	skipped := 0
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return frame{}, skipped, errNoFrame
		}
		f, err := r.readFrame(left)
		if err != nil {
			return f, skipped, err
		}
		if f.StreamID == sid {
			return f, skipped, nil
		}
		skipped++
	}
}

// kv is one ttrpc.KeyValue.
type kv struct{ Key, Value string }

// wireRequest is ttrpc.Request, encoded by hand:
// 1 service string, 2 method string, 3 payload bytes, 4 timeout_nano int64,
// 5 repeated KeyValue metadata.
type wireRequest struct {
	Service, Method string
	Payload         []byte
	TimeoutNano     int64
	Metadata        []kv
}

// appendString appends a proto3 string field, left out when empty.
func appendString(b []byte, field protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func encodeKV(b []byte, field protowire.Number, e kv) []byte {
	inner := appendString(appendString(nil, 1, e.Key), 2, e.Value)
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, inner)
}

func (q wireRequest) encode() []byte {
	b := appendString(appendString(nil, 1, q.Service), 2, q.Method)
	if len(q.Payload) > 0 {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, q.Payload)
	}
	if q.TimeoutNano != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(q.TimeoutNano))
	}
	for _, e := range q.Metadata {
		b = encodeKV(b, 5, e)
	}
	return b
}

// wireResponse is a decoded ttrpc.Response: 1 google.rpc.Status status
// (1 int32 code, 2 string message, 3 details), 2 bytes payload.
type wireResponse struct {
	HasStatus bool
	Code      int32
	Message   string
	Payload   []byte
}

func (w wireResponse) String() string {
	st := "no status field"
	if w.HasStatus {
		st = fmt.Sprintf("status{code=%d message=%q}", w.Code, w.Message)
	}
	return fmt.Sprintf("%s payload=%d bytes", st, len(w.Payload))
}

// walkFields calls fn for every field of a protobuf message.
func walkFields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var (
			v []byte
			x uint64
		)
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func decodeResponse(b []byte) (wireResponse, error) {
	var w wireResponse
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			w.HasStatus = true
			return walkFields(v, func(n protowire.Number, t protowire.Type, sv []byte, sx uint64) error {
				switch {
				case n == 1 && t == protowire.VarintType:
					w.Code = int32(sx)
				case n == 2 && t == protowire.BytesType:
					w.Message = string(sv)
				}
				return nil
			})
		case num == 2 && typ == protowire.BytesType:
			w.Payload = append([]byte(nil), v...)
		}
		return nil
	})
	return w, err
}

// encodeKVList encodes a message with `repeated ttrpc.KeyValue list = 1`.
func encodeKVList(list []kv) []byte {
	var b []byte
	for _, e := range list {
		b = encodeKV(b, 1, e)
	}
	return b
}

func decodeKVList(b []byte) ([]kv, error) {
	var out []kv
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return fmt.Errorf("unexpected field %d type %d", num, typ)
		}
		var e kv
		if err := walkFields(v, func(n protowire.Number, t protowire.Type, sv []byte, _ uint64) error {
			switch {
			case n == 1 && t == protowire.BytesType:
				e.Key = string(sv)
			case n == 2 && t == protowire.BytesType:
				e.Value = string(sv)
			}
			return nil
		}); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	return out, err
}
