package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/containerd/nri/pkg/api"
	"google.golang.org/protobuf/proto"
)

type codecFigures struct {
	Bytes    int     `json:"bytes"`
	EncodeUs float64 `json:"encode_us"`
	DecodeUs float64 `json:"decode_us"`
}

// measure runs fn repeatedly for about ms milliseconds and returns µs per call.
func measure(ms int, fn func()) float64 {
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
		fn()
	}
	n := 0
	start := time.Now()
	end := start.Add(time.Duration(ms) * time.Millisecond)
	for time.Now().Before(end) {
		for i := 0; i < 100; i++ {
			fn()
		}
		n += 100
	}
	return float64(time.Since(start).Nanoseconds()) / 1e3 / float64(n)
}

func codecOf(raw []byte, msg proto.Message, ms int) codecFigures {
	if err := proto.Unmarshal(raw, msg); err != nil {
		fail("codec: %v", err)
	}
	enc := measure(ms, func() {
		if _, err := proto.Marshal(msg); err != nil {
			fail("codec: %v", err)
		}
	})
	dec := measure(ms, func() {
		m := msg.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(raw, m); err != nil {
			fail("codec: %v", err)
		}
	})
	return codecFigures{Bytes: len(raw), EncodeUs: enc, DecodeUs: dec}
}

func runCodec(args []string) {
	fs := flag.NewFlagSet("codec", flag.ExitOnError)
	request := fs.String("request", "", "CreateContainerRequest bytes")
	response := fs.String("response", "", "StartContainerResponse bytes (may be empty)")
	ms := fs.Int("millis", 1000, "milliseconds per measurement")
	fs.Parse(args)
	out := map[string]codecFigures{}
	raw := mustRead(*request)
	out["CreateContainerRequest"] = codecOf(raw, &api.CreateContainerRequest{}, *ms)
	if *response != "" {
		out["StartContainerResponse"] = codecOf(mustRead(*response), &api.StartContainerResponse{}, *ms)
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
