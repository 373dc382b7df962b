//go:build !nri_v0_11 && !nri_v0_8

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
const nriVersion = "v0.12.2"

// deprecations implements adaptation.DeprecationRecorder, turning each report into the
// PEERS.md message.
type deprecations struct {
	mu   sync.Mutex
	msgs []string
}

func (d *deprecations) PluginWarning(_ context.Context, dep adaptation.Deprecation, plugin, details string) {
	// v0.12.2 reports details as "does not implement a dedicated <Event> RPC call".
	method := strings.TrimSuffix(strings.TrimPrefix(details, "does not implement a dedicated "), " RPC call")
	var msg string
	if dep == adaptation.DeprecatedStateChange && method != details {
		msg = fmt.Sprintf("plugin %s does not implement %s: uses %s", plugin, method, dep)
	} else {
		msg = fmt.Sprintf("plugin %s %s: uses %s", plugin, details, dep)
	}
	fmt.Fprintf(os.Stderr, "[nri-peer runtime %s] deprecation: %s (original: %q)\n", nriVersion, msg, details)
	d.mu.Lock()
	d.msgs = append(d.msgs, msg)
	d.mu.Unlock()
}

func (d *deprecations) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string{}, d.msgs...)
}

// versionOptions are the adaptation options only this release has.
func versionOptions(d *deprecations) []adaptation.Option {
	return []adaptation.Option{adaptation.WithDeprecationRecorder(d)}
}

// stateChangeEraEvent delivers one of the nine events that v0.11 sends as StateChange; v0.12.2
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
