//go:build !nri_v0_8

package main

import (
	"context"

	"github.com/containerd/nri/pkg/adaptation"
)

// missingEvents: releases from v0.9 on have a call for every script event.
var missingEvents = map[string]bool{}

// updatePodSandbox delivers UpdatePodSandbox, which has its own request since v0.9.
func updatePodSandbox(ctx context.Context, r *adaptation.Adaptation) error {
	_, err := r.UpdatePodSandbox(ctx, &adaptation.UpdatePodSandboxRequest{Pod: demoPod()})
	return err
}
