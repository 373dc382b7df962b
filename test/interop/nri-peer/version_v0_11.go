//go:build nri_v0_11

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/containerd/nri/pkg/adaptation"
)

// nriVersion is the containerd/nri release this build is pinned to (nri-v0.11.0.mod).
const nriVersion = "v0.11.0"

// deprecations: v0.11.0 knows no dedicated calls, so it never records any.
type deprecations struct{}

func (*deprecations) list() []deprecationRecord { return []deprecationRecord{} }

// versionOptions: v0.11.0 has no options beyond the shared ones.
func versionOptions(*deprecations) []adaptation.Option { return nil }

// stateChangeEraEvent delivers one of the nine events that v0.11.0 takes as a StateChangeEvent
// (pod events carry no container).
func stateChangeEraEvent(ctx context.Context, r *adaptation.Adaptation, event string) error {
	ev := &adaptation.StateChangeEvent{Pod: demoPod()}
	if !strings.HasSuffix(event, "PodSandbox") {
		ev.Container = demoContainer()
	}
	switch event {
	case "RunPodSandbox":
		return r.RunPodSandbox(ctx, ev)
	case "StopPodSandbox":
		return r.StopPodSandbox(ctx, ev)
	case "RemovePodSandbox":
		return r.RemovePodSandbox(ctx, ev)
	case "PostUpdatePodSandbox":
		return r.PostUpdatePodSandbox(ctx, ev)
	case "PostCreateContainer":
		return r.PostCreateContainer(ctx, ev)
	case "StartContainer":
		return r.StartContainer(ctx, ev)
	case "PostStartContainer":
		return r.PostStartContainer(ctx, ev)
	case "PostUpdateContainer":
		return r.PostUpdateContainer(ctx, ev)
	case "RemoveContainer":
		return r.RemoveContainer(ctx, ev)
	}
	return fmt.Errorf("nri-peer: %s is not a StateChange-era event", event)
}
