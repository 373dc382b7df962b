package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
	"google.golang.org/protobuf/proto"
)

type quiet struct{}

func (quiet) Debugf(context.Context, string, ...interface{}) {}
func (quiet) Infof(context.Context, string, ...interface{})  {}
func (quiet) Warnf(context.Context, string, ...interface{})  {}
func (quiet) Errorf(_ context.Context, f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "nri-bench runtime: "+f+"\n", a...)
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
	phases := fs.String("phases", "steady:5", "phases to run (bench/nri/phases.ts)")
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
	// Every plugin registered and no event yet: the driver reads their idle memory.
	mark(stdin, "synced")
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
	fmt.Printf("{\"annotations\":%d,\"request_bytes\":%d}\n", len(rsp.GetAdjust().GetAnnotations()), len(mustRead(*request)))
	runPhases(parsePhases(*phases), cycle)
	// Stay up so that the peak RSS can be read; the bench kills the process.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
