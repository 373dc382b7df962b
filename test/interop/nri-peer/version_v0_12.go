//go:build !nri_v0_11

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/containerd/nri/pkg/adaptation"
)

// nriVersion is the containerd/nri release this build is pinned to (go.mod).
const nriVersion = "v0.12.5"

// deprecations implements adaptation.DeprecationRecorder, keeping each report as the
// record containerd makes of it (PEERS.md): the plugin, what is deprecated, and the details.
type deprecations struct {
	mu   sync.Mutex
	recs []deprecationRecord
}

func (d *deprecations) PluginWarning(_ context.Context, dep adaptation.Deprecation, plugin, details string) {
	rec := deprecationRecord{Plugin: plugin, Deprecated: strings.TrimPrefix(dep.String(), "deprecated "), Detail: details}
	fmt.Fprintf(os.Stderr, "[nri-peer runtime %s] deprecation: %+v\n", nriVersion, rec)
	d.mu.Lock()
	d.recs = append(d.recs, rec)
	d.mu.Unlock()
}

func (d *deprecations) list() []deprecationRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]deprecationRecord{}, d.recs...)
}

// versionOptions are the adaptation options only this release has.
func versionOptions(d *deprecations) []adaptation.Option {
	return []adaptation.Option{adaptation.WithDeprecationRecorder(d)}
}

// stateChangeEraEvent delivers one of the nine events that v0.11 sends as StateChange; v0.12
// has a dedicated request for each.
func stateChangeEraEvent(ctx context.Context, r *adaptation.Adaptation, event string) error {
	pod, ctr := demoPod(), demoContainer()
	switch event {
	case "RunPodSandbox":
		return r.RunPodSandbox(ctx, &adaptation.RunPodSandboxRequest{Pod: pod})
	case "StopPodSandbox":
		return r.StopPodSandbox(ctx, &adaptation.StopPodSandboxRequest{Pod: pod})
	case "RemovePodSandbox":
		return r.RemovePodSandbox(ctx, &adaptation.RemovePodSandboxRequest{Pod: pod})
	case "PostUpdatePodSandbox":
		return r.PostUpdatePodSandbox(ctx, &adaptation.PostUpdatePodSandboxRequest{Pod: pod})
	case "PostCreateContainer":
		return r.PostCreateContainer(ctx, &adaptation.PostCreateContainerRequest{Pod: pod, Container: ctr})
	case "StartContainer":
		return r.StartContainer(ctx, &adaptation.StartContainerRequest{Pod: pod, Container: ctr})
	case "PostStartContainer":
		return r.PostStartContainer(ctx, &adaptation.PostStartContainerRequest{Pod: pod, Container: ctr})
	case "PostUpdateContainer":
		return r.PostUpdateContainer(ctx, &adaptation.PostUpdateContainerRequest{Pod: pod, Container: ctr})
	case "RemoveContainer":
		return r.RemoveContainer(ctx, &adaptation.RemoveContainerRequest{Pod: pod, Container: ctr})
	}
	return fmt.Errorf("nri-peer: %s is not a StateChange-era event", event)
}
