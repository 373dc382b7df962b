// Command go-plugin is the cluster suite's Go NRI plugin, the reference its TypeScript twin
// (examples/env-injector.ts) is compared with: the same behaviour, the same chart shape.
//
//	go-plugin [--config FILE] [--socket PATH] [--name NAME] [--idx NN] [--ready FILE]
//	go-plugin probe [--ready FILE]
//
// Every container it sees created in a pod annotated `nri-wire.dev/adjust: "true"` gets the
// config's environment variables and annotations and, when the config names one, a pids limit.
// The config is a JSON file:
//
//	{"env": {"NAME": "value"}, "annotations": {"key": "value"}, "pidsLimit": 512}
//
// It keeps FILE (default /run/nri-plugin/ready) while the runtime has it configured and
// synchronized, and removes it when the connection ends; `probe` (the readiness probe: the image
// has no shell) exits 0 only while FILE names a process that is still this one. When the
// connection ends it connects again, once the socket accepts, until SIGTERM.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

// selector is the pod annotation that opts a pod's containers in.
const selector = "nri-wire.dev/adjust"

type config struct {
	Env         map[string]string `json:"env"`
	Annotations map[string]string `json:"annotations"`
	PidsLimit   int64             `json:"pidsLimit"`
}

type plugin struct {
	cfg   config
	ready string
}

func readConfig(file string) (config, error) {
	var c config
	if file == "" {
		return c, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return c, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("config %s: %w", file, err)
	}
	if c.PidsLimit < 0 {
		return c, fmt.Errorf("config %s: pidsLimit %d is negative", file, c.PidsLimit)
	}
	return c, nil
}

func (p *plugin) Configure(_ context.Context, cfg, runtime, version string) (api.EventMask, error) {
	fmt.Fprintf(os.Stderr, "go-plugin: configured by %s %s\n", runtime, version)
	return api.MustParseEventMask("CreateContainer"), nil
}

func (p *plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	// Registered: the runtime sends Synchronize once it has the plugin configured.
	state := fmt.Sprintf("%d %s\n", os.Getpid(), startTime(os.Getpid()))
	if err := os.WriteFile(p.ready, []byte(state), 0o644); err != nil {
		return nil, fmt.Errorf("ready file: %w", err)
	}
	fmt.Fprintf(os.Stderr, "go-plugin: registered; %d pods, %d containers\n", len(pods), len(ctrs))
	return nil, nil
}

func (p *plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	if pod.GetAnnotations()[selector] != "true" {
		return nil, nil, nil
	}
	adjust := &api.ContainerAdjustment{}
	for k, v := range p.cfg.Env {
		adjust.AddEnv(k, v)
	}
	for k, v := range p.cfg.Annotations {
		adjust.AddAnnotation(k, v)
	}
	if p.cfg.PidsLimit > 0 {
		adjust.SetLinuxPidLimits(p.cfg.PidsLimit)
	}
	fmt.Fprintf(os.Stderr, "go-plugin: adjusted %s/%s/%s\n", pod.GetNamespace(), pod.GetName(), ctr.GetName())
	return adjust, nil, nil
}

// startTime is field 22 of /proc/PID/stat: with the PID it names one process, not a reused PID.
func startTime(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces; fields after its closing parenthesis do not.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func probe(ready string) int {
	b, err := os.ReadFile(ready)
	if err != nil {
		fmt.Printf("not registered: %v\n", err)
		return 1
	}
	var pid int
	var started string
	if _, err := fmt.Sscanf(string(b), "%d %s", &pid, &started); err != nil || startTime(pid) != started {
		fmt.Printf("not registered: %s names a process that is gone\n", ready)
		return 1
	}
	fmt.Printf("registered (pid %d)\n", pid)
	return 0
}

// waitForSocket resolves once the socket accepts a connection (the runtime may be restarting).
func waitForSocket(ctx context.Context, path string) error {
	for {
		c, err := net.Dial("unix", path)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "probe" {
		fs := flag.NewFlagSet("probe", flag.ExitOnError)
		ready := fs.String("ready", "/run/nri-plugin/ready", "the file kept while registered")
		_ = fs.Parse(os.Args[2:])
		os.Exit(probe(*ready))
	}
	cfgFile := flag.String("config", "", "the JSON config file")
	socket := flag.String("socket", api.DefaultSocketPath, "the runtime's NRI socket")
	name := flag.String("name", "go-env-injector", "plugin name")
	idx := flag.String("idx", "50", "plugin index")
	ready := flag.String("ready", "/run/nri-plugin/ready", "the file kept while registered")
	flag.Parse()

	cfg, err := readConfig(*cfgFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-plugin: %v\n", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(filepath.Dir(*ready), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "go-plugin: ready file: %v\n", err)
		os.Exit(1)
	}
	_ = os.Remove(*ready)
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	p := &plugin{cfg: cfg, ready: *ready}
	for {
		if err := waitForSocket(ctx, *socket); err != nil {
			break
		}
		s, err := stub.New(p, stub.WithPluginName(*name), stub.WithPluginIdx(*idx), stub.WithSocketPath(*socket))
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-plugin: %v\n", err)
			os.Exit(1)
		}
		err = s.Run(ctx)
		_ = os.Remove(*ready)
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(os.Stderr, "go-plugin: connection ended (%v); connecting again\n", err)
		if errors.Is(err, context.Canceled) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	_ = os.Remove(*ready)
}
