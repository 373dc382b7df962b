package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
	"google.golang.org/protobuf/proto"
)

// warmupCycles matches WARMUP_CYCLES of bench/nri/cycles.ts.
const warmupCycles = 1500

type quiet struct{}

func (quiet) Debugf(context.Context, string, ...interface{}) {}
func (quiet) Infof(context.Context, string, ...interface{})  {}
func (quiet) Warnf(context.Context, string, ...interface{})  {}
func (quiet) Errorf(_ context.Context, f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "nri-bench runtime: "+f+"\n", a...)
}

type cycleFigures struct {
	Cycles        int     `json:"cycles"`
	EventsPerSec  float64 `json:"events_per_sec"`
	CyclesPerSec  float64 `json:"cycles_per_sec"`
	P50Us         float64 `json:"p50_us"`
	P99Us         float64 `json:"p99_us"`
	Annotations   int     `json:"annotations"`
	RequestBytes  int     `json:"request_bytes"`
	ResponseBytes int     `json:"response_bytes"`
}

func readRequest(path string) *api.CreateContainerRequest {
	req := &api.CreateContainerRequest{}
	if err := proto.Unmarshal(mustRead(path), req); err != nil {
		fail("request %s: %v", path, err)
	}
	return req
}

func runRuntime(args []string) {
	fs := flag.NewFlagSet("runtime", flag.ExitOnError)
	socket := fs.String("socket", "", "socket path")
	nplugins := fs.Int("plugins", 1, "plugins to wait for")
	request := fs.String("request", "", "CreateContainerRequest bytes")
	seconds := fs.Float64("seconds", 5, "measured seconds")
	serve := fs.Bool("serve", false, "only report each synchronized plugin")
	fs.Parse(args)
	serveOnly := *serve
	if *socket == "" || (!serveOnly && *request == "") {
		fail("runtime: --socket and --request are required")
	}
	nrilog.Set(quiet{})
	adaptation.SetPluginRequestTimeout(10 * time.Second)

	synced := make(chan struct{}, 64)
	syncFn := func(ctx context.Context, cb adaptation.SyncCB) error {
		_, err := cb(ctx, nil, nil)
		if err == nil {
			select {
			case synced <- struct{}{}:
			default:
			}
		}
		return err
	}
	updateFn := func(context.Context, []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) { return nil, nil }
	r, err := adaptation.New("nri-bench", "v1", syncFn, updateFn,
		adaptation.WithSocketPath(*socket),
		adaptation.WithPluginPath("/nonexistent/nri-bench/plugins"),
		adaptation.WithPluginConfigPath("/nonexistent/nri-bench/conf.d"))
	if err != nil {
		fail("runtime: %v", err)
	}
	if err := r.Start(); err != nil {
		fail("runtime: start: %v", err)
	}
	<-synced // Start() synchronizes the (empty) set of pre-installed plugins once
	fmt.Println("ready")
	if serveOnly {
		for range synced {
			fmt.Println("synced")
		}
		return
	}
	for i := 0; i < *nplugins; i++ {
		<-synced
		fmt.Println("synced")
	}
	base := readRequest(*request)
	ctx := context.Background()
	ctr := base.Container
	// A synced plugin is appended to the adaptation's list right after its sync returns: run
	// cycles until every plugin's annotation is in the reply before measuring.
	var rsp *api.CreateContainerResponse
	for deadline := time.Now().Add(10 * time.Second); ; {
		rsp, err = r.CreateContainer(ctx, proto.Clone(base).(*api.CreateContainerRequest))
		if err != nil {
			fail("runtime: CreateContainer: %v", err)
		}
		if len(rsp.GetAdjust().GetAnnotations()) >= *nplugins {
			break
		}
		if time.Now().After(deadline) {
			fail("runtime: %d plugins synced but only %d answered", *nplugins, len(rsp.GetAdjust().GetAnnotations()))
		}
	}
	cycle := func() {
		req := proto.Clone(base).(*api.CreateContainerRequest)
		if _, err := r.CreateContainer(ctx, req); err != nil {
			fail("runtime: CreateContainer: %v", err)
		}
		if err := r.StartContainer(ctx, &api.StartContainerRequest{Pod: base.Pod, Container: ctr}); err != nil {
			fail("runtime: StartContainer: %v", err)
		}
		if err := r.PostStartContainer(ctx, &api.PostStartContainerRequest{Pod: base.Pod, Container: ctr}); err != nil {
			fail("runtime: PostStartContainer: %v", err)
		}
	}
	// Warm-up: at least warmupCycles cycles and one second, at most 30 s (bench/nri/cycles.ts
	// uses the same rule; it is for the JIT of the TypeScript twin).
	for n, t0 := 0, time.Now(); (n < warmupCycles || time.Since(t0) < time.Second) && time.Since(t0) < 30*time.Second; n++ {
		cycle()
	}
	var lat []float64
	start := time.Now()
	end := start.Add(time.Duration(*seconds * float64(time.Second)))
	for time.Now().Before(end) {
		t0 := time.Now()
		cycle()
		lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e3)
	}
	elapsed := time.Since(start).Seconds()
	sort.Float64s(lat)
	pct := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))] }
	rspBytes, _ := proto.Marshal(rsp)
	reqBytes, _ := proto.Marshal(base)
	out, _ := json.Marshal(cycleFigures{
		Cycles: len(lat), CyclesPerSec: float64(len(lat)) / elapsed, EventsPerSec: 3 * float64(len(lat)) / elapsed,
		P50Us: pct(0.5), P99Us: pct(0.99), Annotations: len(rsp.GetAdjust().GetAnnotations()),
		RequestBytes: len(reqBytes), ResponseBytes: len(rspBytes),
	})
	fmt.Println(string(out))
	// Stay up so that the peak RSS can be read; the bench kills the process.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
