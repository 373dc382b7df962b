//go:build nri_v0_11

package main

import (
	"context"
	"fmt"

	"github.com/containerd/nri/pkg/adaptation"
)

// nriVersion is the containerd/nri release this build is pinned to (nri-v0.11.0.mod).
const nriVersion = "v0.11.0"

// versionStateChangeEvent delivers the StateChange-era event v0.11.0 has and v0.8.0 lacks
// (version_pre_v0_12.go delivers the rest).
func versionStateChangeEvent(ctx context.Context, r *adaptation.Adaptation, event string, ev *adaptation.StateChangeEvent) error {
	if event == "PostUpdatePodSandbox" {
		return r.PostUpdatePodSandbox(ctx, ev)
	}
	return fmt.Errorf("nri-peer: %s is not a StateChange-era event", event)
}
