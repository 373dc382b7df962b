//go:build nri_v0_8

package main

import (
	"context"
	"fmt"

	"github.com/containerd/nri/pkg/adaptation"
)

// nriVersion is the containerd/nri release this build is pinned to (nri-v0.8.0.mod, the NRI of
// containerd 2.0 and 2.1): no validation, no version exchange, no pod sandbox updates. This
// build is a runtime peer only (plugin_v0_8.go).
const nriVersion = "v0.8.0"

// missingEvents are script events v0.8.0 has no call for: the runtime skips them.
var missingEvents = map[string]bool{"UpdatePodSandbox": true, "PostUpdatePodSandbox": true}

// updatePodSandbox is never called: UpdatePodSandbox is in missingEvents.
func updatePodSandbox(context.Context, *adaptation.Adaptation) error {
	return fmt.Errorf("nri-peer: %s has no UpdatePodSandbox", nriVersion)
}

// versionStateChangeEvent: v0.8.0 has no StateChange-era event beyond those that
// version_pre_v0_12.go delivers.
func versionStateChangeEvent(_ context.Context, _ *adaptation.Adaptation, event string, _ *adaptation.StateChangeEvent) error {
	return fmt.Errorf("nri-peer: %s is not a StateChange-era event of %s", event, nriVersion)
}
