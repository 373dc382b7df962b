// Command nri-peer is an NRI interop peer built against one containerd/nri release: v0.12.5
// with go.mod, v0.11.0 with `-modfile=nri-v0.11.0.mod -tags nri_v0_11` (the release's API
// differences live in version_*.go).
//
// Subcommands (see ../PEERS.md, section "NRI peers"):
//
//	nri-peer runtime --socket PATH [--plugins N]   (pkg/adaptation)
//	nri-peer plugin  --socket PATH [--name NAME] [--idx NN]   (pkg/stub)
//	nri-peer drive   --socket PATH [--plugins N] [--updates N] [--runtime-name NAME] [--runtime-version V] [--pod-annotations JSON]
//
// Every stdout line is one JSON object; all logging goes to stderr.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	nrilog "github.com/containerd/nri/pkg/log"
)

var stdoutMu sync.Mutex

// emit writes v as one JSON line on stdout.
func emit(v any) {
	buf, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nri-peer: cannot encode output line: %v\n", err)
		os.Exit(1)
	}
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	os.Stdout.Write(append(buf, '\n'))
}

// fail logs to stderr and exits 1.
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "nri-peer: "+format+"\n", args...)
	os.Exit(1)
}

// stderrLogger is an nri pkg/log Logger writing plain lines to stderr. An
// optional hook sees every message (the runtime uses it to notice plugins
// being dropped while the script runs).
type stderrLogger struct {
	prefix string
	hook   func(level, msg string)
}

var _ nrilog.Logger = (*stderrLogger)(nil)

func (l *stderrLogger) out(level, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(os.Stderr, "%s %s: %s\n", l.prefix, level, msg)
	if l.hook != nil {
		l.hook(level, msg)
	}
}

func (l *stderrLogger) Debugf(_ context.Context, format string, args ...any) {
	if os.Getenv("NRI_PEER_DEBUG") != "" {
		l.out("debug", format, args...)
	}
}
func (l *stderrLogger) Infof(_ context.Context, format string, args ...any) {
	l.out("info", format, args...)
}
func (l *stderrLogger) Warnf(_ context.Context, format string, args ...any) {
	l.out("warn", format, args...)
}
func (l *stderrLogger) Errorf(_ context.Context, format string, args ...any) {
	l.out("error", format, args...)
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage:\n  %[1]s runtime --socket PATH [--plugins N] [TIMEOUTS]\n  %[1]s drive --socket PATH [--plugins N] [--updates N] [--runtime-name NAME] [--runtime-version V] [--pod-annotations JSON] [TIMEOUTS]\n  %[1]s plugin --socket PATH [--name NAME] [--idx NN]\nTIMEOUTS: [--registration-timeout D] [--request-timeout D] [--plugin-wait D] [--overall D] (Go durations)\n", os.Args[0])
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "runtime":
		runRuntime(os.Args[2:])
	case "plugin":
		runPlugin(os.Args[2:])
	case "drive":
		runDrive(os.Args[2:])
	default:
		usage()
	}
}
