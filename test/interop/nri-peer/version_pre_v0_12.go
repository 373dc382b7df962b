//go:build nri_v0_11 || nri_v0_8

package main

import (
	"context"
	"strings"

	"github.com/containerd/nri/pkg/adaptation"
)

// deprecations: releases before v0.12 know no dedicated calls, so they never record any.
type deprecations struct{}

func (*deprecations) list() []deprecationRecord { return []deprecationRecord{} }

// versionOptions: releases before v0.12 have no options beyond the shared ones.
func versionOptions(*deprecations) []adaptation.Option { return nil }

// stateChangeEraEvent delivers one of the events that releases before v0.12 take as a
// StateChangeEvent (pod events carry no container); what only some of them have is left to
// versionStateChangeEvent.
func stateChangeEraEvent(ctx context.Context, r *adaptation.Adaptation, event string) error {
	ev := &adaptation.StateChangeEvent{Pod: demoPod()}
	if !strings.HasSuffix(event, "PodSandbox") {
		ev.Container = demoContainer()
	}
	calls := map[string]func(context.Context, *adaptation.StateChangeEvent) error{
		"RunPodSandbox":       r.RunPodSandbox,
		"StopPodSandbox":      r.StopPodSandbox,
		"RemovePodSandbox":    r.RemovePodSandbox,
		"PostCreateContainer": r.PostCreateContainer,
		"StartContainer":      r.StartContainer,
		"PostStartContainer":  r.PostStartContainer,
		"PostUpdateContainer": r.PostUpdateContainer,
		"RemoveContainer":     r.RemoveContainer,
	}
	if call, ok := calls[event]; ok {
		return call(ctx, ev)
	}
	return versionStateChangeEvent(ctx, r, event, ev)
}
