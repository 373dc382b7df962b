//go:build !nri_v0_8

package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
	"github.com/containerd/nri/pkg/stub"
)

// eventLine is the stdout line printed for every event the plugin receives.
type eventLine struct {
	Plugin     string `json:"plugin"`
	Event      string `json:"event"`
	Pod        string `json:"pod"`
	Container  string `json:"container"`
	Pods       *int   `json:"pods,omitempty"`
	Containers *int   `json:"containers,omitempty"`
}

// peerPlugin implements every handler interface of pkg/stub.
type peerPlugin struct {
	name      string
	shutdownC chan struct{}
}

func (p *peerPlugin) seen(event string, pod *api.PodSandbox, ctr *api.Container) {
	emit(eventLine{
		Plugin:    p.name,
		Event:     event,
		Pod:       pod.GetId(),
		Container: ctr.GetId(),
	})
}

func (p *peerPlugin) Configure(_ context.Context, _, _, _ string) (api.EventMask, error) {
	p.seen("Configure", nil, nil)
	return 0, nil // 0: subscribe to everything this plugin handles
}

func (p *peerPlugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	np, nc := len(pods), len(ctrs)
	emit(eventLine{Plugin: p.name, Event: "Synchronize", Pods: &np, Containers: &nc})
	return nil, nil
}

func (p *peerPlugin) Shutdown(_ context.Context) {
	p.seen("Shutdown", nil, nil)
	select {
	case <-p.shutdownC:
	default:
		close(p.shutdownC)
	}
}

func (p *peerPlugin) RunPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.seen("RunPodSandbox", pod, nil)
	return nil
}

func (p *peerPlugin) UpdatePodSandbox(_ context.Context, pod *api.PodSandbox, _, _ *api.LinuxResources) error {
	p.seen("UpdatePodSandbox", pod, nil)
	return nil
}

func (p *peerPlugin) PostUpdatePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.seen("PostUpdatePodSandbox", pod, nil)
	return nil
}

func (p *peerPlugin) StopPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.seen("StopPodSandbox", pod, nil)
	return nil
}

func (p *peerPlugin) RemovePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.seen("RemovePodSandbox", pod, nil)
	return nil
}

func (p *peerPlugin) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.seen("CreateContainer", pod, ctr)
	adjust := &api.ContainerAdjustment{}
	adjust.AddAnnotation("nri-wire/seen", "true")
	adjust.AddEnv("NRI_WIRE_SEEN", "true")
	return adjust, nil, nil
}

func (p *peerPlugin) PostCreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.seen("PostCreateContainer", pod, ctr)
	return nil
}

func (p *peerPlugin) StartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.seen("StartContainer", pod, ctr)
	return nil
}

func (p *peerPlugin) PostStartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.seen("PostStartContainer", pod, ctr)
	return nil
}

func (p *peerPlugin) UpdateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container, _ *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	p.seen("UpdateContainer", pod, ctr)
	update := &api.ContainerUpdate{
		ContainerId: ctr.GetId(),
		Linux: &api.LinuxContainerUpdate{
			Resources: &api.LinuxResources{
				Cpu: &api.LinuxCPU{Shares: api.UInt64(uint64(512))},
			},
		},
	}
	return []*api.ContainerUpdate{update}, nil
}

func (p *peerPlugin) PostUpdateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.seen("PostUpdateContainer", pod, ctr)
	return nil
}

func (p *peerPlugin) StopContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p.seen("StopContainer", pod, ctr)
	return nil, nil
}

func (p *peerPlugin) RemoveContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.seen("RemoveContainer", pod, ctr)
	return nil
}

func (p *peerPlugin) ValidateContainerAdjustment(_ context.Context, req *api.ValidateContainerAdjustmentRequest) error {
	p.seen("ValidateContainerAdjustment", req.GetPod(), req.GetContainer())
	return nil
}

// startTimeout bounds connecting, registering and getting configured.
const startTimeout = 15 * time.Second

func runPlugin(args []string) {
	fs := flag.NewFlagSet("plugin", flag.ExitOnError)
	socket := fs.String("socket", "", "runtime socket to connect to")
	name := fs.String("name", "peer-plugin", "plugin name")
	idx := fs.String("idx", "10", "plugin index (two digits)")
	fs.Parse(args)
	if *socket == "" || fs.NArg() != 0 {
		fail("plugin: --socket PATH is required")
	}

	// The stub would otherwise pick identity or a pre-connected fd from these.
	for _, v := range []string{api.PluginNameEnvVar, api.PluginIdxEnvVar, api.PluginSocketEnvVar} {
		os.Unsetenv(v)
	}

	logger := &stderrLogger{prefix: "[nri-peer plugin " + nriVersion + "]"}
	nrilog.Set(logger)

	p := &peerPlugin{name: *idx + "-" + *name, shutdownC: make(chan struct{})}
	closedC := make(chan struct{})
	var closeOnce sync.Once

	s, err := stub.New(p,
		stub.WithPluginName(*name),
		stub.WithPluginIdx(*idx),
		stub.WithSocketPath(*socket),
		stub.WithLogger(logger),
		stub.WithOnClose(func() { closeOnce.Do(func() { close(closedC) }) }),
	)
	if err != nil {
		fail("plugin: cannot create stub: %v", err)
	}

	startErr := make(chan error, 1)
	go func() { startErr <- s.Start(context.Background()) }()
	select {
	case err := <-startErr:
		if err != nil {
			fail("plugin: start failed: %v", err)
		}
	case <-time.After(startTimeout):
		fail("plugin: not registered and configured within %v", startTimeout)
	}

	sigC := make(chan os.Signal, 1)
	signal.Notify(sigC, syscall.SIGINT, syscall.SIGTERM)

	select {
	case <-closedC:
		logger.Infof(context.TODO(), "runtime closed the connection")
	case <-p.shutdownC:
		logger.Infof(context.TODO(), "runtime sent Shutdown")
		// Let the Shutdown reply go out before the connection is torn down.
		time.Sleep(50 * time.Millisecond)
		s.Stop()
	case sig := <-sigC:
		logger.Infof(context.TODO(), "got %v, stopping", sig)
		s.Stop()
	}
	os.Exit(0)
}
