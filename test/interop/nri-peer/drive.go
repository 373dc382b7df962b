//go:build !nri_v0_8

package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
)

// raw is an api message as encoding/json writes it: proto field names, 64-bit integers and enums
// as numbers, empty fields left out. protobuf-es reads that with fromJson, so the test compares
// messages, not text.
func raw(m any) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		fail("drive: cannot encode %T: %v", m, err)
	}
	return b
}

func rawList[T interface{ comparable }](list []T) []json.RawMessage {
	out := []json.RawMessage{}
	for _, m := range list {
		var none T
		if m == none { // the adaptation leaves nil entries for untouched containers
			continue
		}
		out = append(out, raw(m))
	}
	return out
}

// driveLine is one line of `drive` output: the full answer of the plugins to one event.
type driveLine struct {
	Event  string            `json:"event"`
	OK     bool              `json:"ok"`
	Error  string            `json:"error,omitempty"`
	Adjust json.RawMessage   `json:"adjust,omitempty"`
	Update []json.RawMessage `json:"update,omitempty"`
	Evict  []json.RawMessage `json:"evict,omitempty"`
}

// runDrive is `nri-peer drive`: like `runtime`, but every answer is printed whole, as JSON,
// so that example plugins can be checked field by field. It names itself as --runtime-name and
// --runtime-version (to be taken for an older runtime), prints each plugin's Synchronize updates
// and each unsolicited UpdateContainers, and waits for --updates of the latter before exiting.
func runDrive(args []string) {
	fs := flag.NewFlagSet("drive", flag.ExitOnError)
	socket := fs.String("socket", "", "socket path to listen on")
	nplugins := fs.Int("plugins", 1, "number of plugins to wait for")
	nupdates := fs.Int("updates", 0, "number of unsolicited UpdateContainers calls to wait for")
	name := fs.String("runtime-name", "nri-wire-peer", "runtime name sent in Configure")
	version := fs.String("runtime-version", nriVersion, "runtime version sent in Configure")
	annotations := fs.String("pod-annotations", "{}", "JSON object of annotations for the pod of CreateContainer, UpdateContainer and StopContainer")
	limits := timeoutFlags(fs)
	fs.Parse(args)
	if *socket == "" || fs.NArg() != 0 {
		fail("drive: --socket PATH is required")
	}
	podAnnotations := map[string]string{}
	if err := json.Unmarshal([]byte(*annotations), &podAnnotations); err != nil {
		fail("drive: --pod-annotations: %v", err)
	}
	pod := func() *api.PodSandbox {
		p := demoPod()
		p.Annotations = podAnnotations
		return p
	}
	// The container of the events whose answers are printed: the demo container, with the Linux
	// part the adaptation edits in place when merging (v0.11.0 crashes on a nil sysctl map).
	container := func() *api.Container {
		c := demoContainer()
		c.Linux = &api.LinuxContainer{Sysctl: map[string]string{"net.core.somaxconn": "4096"}}
		return c
	}
	limits.apply("drive")

	mon := &monitor{}
	logger := &stderrLogger{prefix: "[nri-peer drive " + nriVersion + "]", hook: mon.hook}
	nrilog.Set(logger)

	var mu sync.Mutex
	syncCalls := 0
	syncedC := make(chan struct{}, 64)
	updatesC := make(chan struct{}, 64)
	syncFn := func(ctx context.Context, cb adaptation.SyncCB) error {
		mu.Lock()
		preinstalled := syncCalls == 0
		syncCalls++
		mu.Unlock()
		updates, err := cb(ctx, []*api.PodSandbox{syncPod()}, []*api.Container{syncContainer()})
		if err != nil {
			return err
		}
		if !preinstalled {
			emit(map[string]any{"synchronize": rawList(updates)})
			syncedC <- struct{}{}
		}
		return nil
	}
	updateFn := func(ctx context.Context, updates []*adaptation.ContainerUpdate) ([]*adaptation.ContainerUpdate, error) {
		emit(map[string]any{"unsolicited": rawList(updates)})
		updatesC <- struct{}{}
		return nil, nil
	}
	deps := &deprecations{}
	r := startAdaptation("drive", *socket, *name, *version, syncFn, updateFn, deps, *nplugins, syncedC, limits.pluginWait)

	mon.arm(true)
	ctx := context.Background()
	allOK := true
	step := func(event string, call func(*driveLine) error) {
		line := driveLine{Event: event, OK: true}
		err := call(&line)
		problems := mon.take()
		switch {
		case err != nil:
			line.OK, line.Error = false, err.Error()
		case len(problems) > 0:
			line.OK, line.Error = false, strings.Join(problems, "; ")
		}
		allOK = allOK && line.OK
		emit(line)
	}
	plain := func(event string) {
		step(event, func(*driveLine) error { return stateChangeEraEvent(ctx, r, event) })
	}

	plain("RunPodSandbox")
	step("CreateContainer", func(l *driveLine) error {
		rpl, err := r.CreateContainer(ctx, &adaptation.CreateContainerRequest{Pod: pod(), Container: container()})
		if err != nil {
			return err
		}
		l.Adjust, l.Update, l.Evict = raw(rpl.GetAdjust()), rawList(rpl.GetUpdate()), rawList(rpl.GetEvict())
		return nil
	})
	plain("PostCreateContainer")
	plain("StartContainer")
	plain("PostStartContainer")
	step("UpdateContainer", func(l *driveLine) error {
		rpl, err := r.UpdateContainer(ctx, &adaptation.UpdateContainerRequest{Pod: pod(), Container: container()})
		if err != nil {
			return err
		}
		l.Update, l.Evict = rawList(rpl.GetUpdate()), rawList(rpl.GetEvict())
		return nil
	})
	plain("PostUpdateContainer")
	step("StopContainer", func(l *driveLine) error {
		rpl, err := r.StopContainer(ctx, &adaptation.StopContainerRequest{Pod: pod(), Container: container()})
		if err != nil {
			return err
		}
		l.Update = rawList(rpl.GetUpdate())
		return nil
	})
	plain("RemoveContainer")
	plain("StopPodSandbox")
	plain("RemovePodSandbox")
	mon.arm(false)

	wait := time.After(limits.pluginWait)
	for n := 0; n < *nupdates; n++ {
		select {
		case <-updatesC:
		case <-wait:
			fail("drive: only %d of %d unsolicited updates arrived within %v", n, *nupdates, limits.pluginWait)
		}
	}
	emit(deprecationsLine{Deprecations: deps.list()})
	r.Stop()
	if !allOK {
		os.Exit(1)
	}
	os.Exit(0)
}
