package main

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/containerd/ttrpc"
	"google.golang.org/protobuf/proto"
)

func TestRawCarriesArbitraryBytes(t *testing.T) {
	big := make([]byte, 4<<20)
	rand.Read(big)
	for _, in := range [][]byte{nil, {0x78}, {0xff, 0xff, 0xff}, big} {
		out, err := proto.Marshal(NewRaw(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("marshal %d bytes: err=%v, got %d bytes", len(in), err, len(out))
		}
		var back Raw
		if err := proto.Unmarshal(out, &back); err != nil || !bytes.Equal(back.B, in) {
			t.Fatalf("unmarshal %d bytes: err=%v, got %d bytes", len(in), err, len(back.B))
		}
		// The copy must not alias the input buffer (ttrpc recycles it).
		if len(out) > 0 {
			out[0] ^= 0xff
			if back.B[0] == out[0] {
				t.Fatal("unmarshal aliased its input")
			}
		}
		// Inside a real ttrpc.Request the bytes land verbatim in field 3.
		req, err := proto.Marshal(&ttrpc.Request{Service: "s", Method: "m", Payload: in})
		if err != nil {
			t.Fatal(err)
		}
		var dec ttrpc.Request
		if err := proto.Unmarshal(req, &dec); err != nil || !bytes.Equal(dec.Payload, in) {
			t.Fatalf("request round trip: %v", err)
		}
	}
	// Unmarshal resets first: no leftovers from a previous value.
	r := NewRaw([]byte("old"))
	if err := proto.Unmarshal([]byte("new"), r); err != nil || string(r.B) != "new" {
		t.Fatalf("got %q, %v", r.B, err)
	}
}
