// Command codec-bench times the Go reference codec on the NRI messages the nri-wire codec
// benchmark uses: protobuf-go's proto.Marshal and proto.Unmarshal (what ttrpc calls), proto.Clone
// and, for reference, the vtprotobuf methods containerd/nri v0.12.5 also generates.
//
//	codec-bench --dir DIR NAME=TYPE ...
//
// reads DIR/NAME.bin for each argument, TYPE being CreateContainerRequest,
// CreateContainerResponse or StartContainerResponse, and prints one JSON line per message with
// the best per-operation time over rounds, in microseconds (the machine may be busy: the best
// round is the one least disturbed).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/nri/pkg/api"
	"google.golang.org/protobuf/proto"
)

type vtMessage interface {
	proto.Message
	MarshalVT() ([]byte, error)
	UnmarshalVT([]byte) error
}

func newMessage(typ string) vtMessage {
	switch typ {
	case "CreateContainerRequest":
		return &api.CreateContainerRequest{}
	case "CreateContainerResponse":
		return &api.CreateContainerResponse{}
	case "StartContainerResponse":
		return &api.StartContainerResponse{}
	}
	fmt.Fprintf(os.Stderr, "codec-bench: unknown type %s\n", typ)
	os.Exit(2)
	return nil
}

// best runs f in rounds of n and returns the best round's time per call, in microseconds.
func best(rounds, n int, f func()) float64 {
	for i := 0; i < n*10; i++ {
		f()
	}
	b := time.Duration(1 << 62)
	for r := 0; r < rounds; r++ {
		t := time.Now()
		for i := 0; i < n; i++ {
			f()
		}
		if d := time.Since(t); d < b {
			b = d
		}
	}
	return float64(b.Nanoseconds()) / float64(n) / 1000
}

func must(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "codec-bench: %v\n", err)
		os.Exit(1)
	}
}

func main() {
	dir := flag.String("dir", ".", "directory of the fixture files")
	rounds := flag.Int("rounds", 60, "rounds per measurement")
	n := flag.Int("n", 200, "calls per round")
	flag.Parse()
	for _, arg := range flag.Args() {
		name, typ, ok := strings.Cut(arg, "=")
		if !ok {
			must(fmt.Errorf("argument %q is not NAME=TYPE", arg))
		}
		data, err := os.ReadFile(filepath.Join(*dir, name+".bin"))
		must(err)
		msg := newMessage(typ)
		must(proto.Unmarshal(data, msg))
		var sink []byte
		out := map[string]any{"name": name, "bytes": len(data)}
		out["encode_us"] = best(*rounds, *n, func() {
			b, err := proto.Marshal(msg)
			must(err)
			sink = b
		})
		out["decode_us"] = best(*rounds, *n, func() {
			m := newMessage(typ)
			must(proto.Unmarshal(data, m))
		})
		var copied proto.Message
		out["clone_us"] = best(*rounds, *n, func() {
			copied = proto.Clone(msg)
		})
		_ = copied
		out["vt_encode_us"] = best(*rounds, *n, func() {
			b, err := msg.MarshalVT()
			must(err)
			sink = b
		})
		out["vt_decode_us"] = best(*rounds, *n, func() {
			m := newMessage(typ)
			must(m.UnmarshalVT(data))
		})
		_ = sink
		line, err := json.Marshal(out)
		must(err)
		fmt.Println(string(line))
	}
}
