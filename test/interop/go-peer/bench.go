package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/containerd/ttrpc"
)

func runBench(args []string) int {
	fs := newFlagSet("bench")
	socket := fs.String("socket", "", "unix socket path of the server")
	conc := fs.Int("conc", 1, "concurrent callers")
	size := fs.Int("size", 100, "payload bytes")
	dur := fs.Float64("duration", 3, "seconds")
	if err := fs.Parse(args); err != nil || *socket == "" || *conc < 1 || *size < 0 || *dur <= 0 {
		fmt.Fprintln(os.Stderr, "usage: go-peer bench --socket PATH --conc N --size B --duration S")
		return 2
	}
	conn, err := net.Dial("unix", *socket)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dial: %v\n", err)
		return 1
	}
	client := ttrpc.NewClient(conn)
	defer client.Close()

	payload := bytes.Repeat([]byte{'b'}, *size)
	stop := time.Now().Add(time.Duration(*dur * float64(time.Second)))
	lat := make([][]time.Duration, *conc)
	errs := make([]error, *conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for time.Now().Before(stop) {
				t0 := time.Now()
				var resp Raw
				if err := client.Call(context.Background(), serviceName, "Echo", NewRaw(payload), &resp); err != nil {
					errs[w] = err
					return
				}
				if len(resp.B) != len(payload) {
					errs[w] = fmt.Errorf("echo returned %d bytes, sent %d", len(resp.B), len(payload))
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 1
		}
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		fmt.Fprintln(os.Stderr, "bench: no call completed")
		return 1
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) float64 {
		i := int(p * float64(len(all)-1))
		return float64(all[i].Nanoseconds()) / 1e3
	}
	round1 := func(v float64) float64 { return float64(int64(v*10)) / 10 }
	out, _ := json.Marshal(struct {
		RPS  float64 `json:"rps"`
		P50  float64 `json:"p50_us"`
		P99  float64 `json:"p99_us"`
		Conc int     `json:"conc"`
		Size int     `json:"size"`
	}{round1(float64(len(all)) / elapsed.Seconds()), round1(pct(0.50)), round1(pct(0.99)), *conc, *size})
	fmt.Println(string(out))
	return 0
}
