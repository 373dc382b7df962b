package main

import (
	"context"
	"flag"
	"strings"

	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
	"github.com/containerd/nri/pkg/stub"
)

// benchPlugin adds one annotation and one environment variable on CreateContainer and
// acknowledges StartContainer and PostStartContainer.
type benchPlugin struct{ name string }

func (p *benchPlugin) CreateContainer(_ context.Context, _ *api.PodSandbox, _ *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	adj := &api.ContainerAdjustment{}
	adj.AddAnnotation("bench.nri-wire.io/"+p.name, "1")
	adj.AddEnv("BENCH_"+strings.ToUpper(strings.ReplaceAll(p.name, "-", "_")), "1")
	return adj, nil, nil
}

func (p *benchPlugin) StartContainer(context.Context, *api.PodSandbox, *api.Container) error {
	return nil
}

func (p *benchPlugin) PostStartContainer(context.Context, *api.PodSandbox, *api.Container) error {
	return nil
}

func runPlugin(args []string) {
	fs := flag.NewFlagSet("plugin", flag.ExitOnError)
	socket := fs.String("socket", "", "runtime socket")
	idx := fs.String("idx", "10", "plugin index")
	name := fs.String("name", "bench", "plugin name")
	fs.Parse(args)
	nrilog.Set(quiet{})
	p := &benchPlugin{name: *name}
	s, err := stub.New(p, stub.WithSocketPath(*socket), stub.WithPluginIdx(*idx), stub.WithPluginName(*name),
		stub.WithOnClose(func() {}))
	if err != nil {
		fail("plugin: %v", err)
	}
	if err := s.Run(context.Background()); err != nil {
		fail("plugin: %v", err)
	}
}
