// Command diff-peer runs the differential scenarios of ../adaptation.diff.test.ts on the Go
// reference, containerd/nri v0.12.5:
//
//	diff-peer runtime --scenario FILE --work DIR   (a runtime on pkg/adaptation)
//	diff-peer plugin  --script FILE --record FILE [--socket PATH --name NAME --idx NN]
//	diff-peer texts                                (Go's own texts a runtime passes on, as JSON)
//
// The runtime prints one canonical JSON line per outcome on stdout (../DIFF.md); the plugin
// (pkg/stub) acts out its script and appends what it received to its record file. The
// TypeScript twin of the runtime is ../diff-runtime.ts; both start this same plugin.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	nrilog "github.com/containerd/nri/pkg/log"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "runtime":
		runRuntime(os.Args[2:])
	case "plugin":
		runPlugin(os.Args[2:])
	case "texts":
		printTexts()
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage:\n  %[1]s runtime --scenario FILE --work DIR\n  %[1]s plugin --script FILE --record FILE [--socket PATH --name NAME --idx NN]\n  %[1]s texts\n", os.Args[0])
	os.Exit(2)
}

// printTexts prints, as one JSON object, the texts of Go's own errors that a runtime on
// pkg/adaptation passes on unchanged where no scenario shows them (a canceled event).
func printTexts() {
	emit(map[string]any{"canceled": context.Canceled.Error(), "deadlineExceeded": context.DeadlineExceeded.Error()})
}

// fail logs to stderr and exits 1.
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "diff-peer: "+format+"\n", args...)
	os.Exit(1)
}

// logger is an nri pkg/log Logger writing to stderr (only when DIFF_PEER_LOG is set) and
// showing every message to an optional hook.
type logger struct {
	prefix string
	hook   func(level, msg string)
}

var _ nrilog.Logger = (*logger)(nil)

func (l *logger) out(level, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("DIFF_PEER_LOG") != "" {
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", l.prefix, level, strings.TrimRight(msg, "\n"))
	}
	if l.hook != nil {
		l.hook(level, msg)
	}
}

func (l *logger) Debugf(_ context.Context, format string, args ...any) {
	l.out("debug", format, args...)
}
func (l *logger) Infof(_ context.Context, format string, args ...any) { l.out("info", format, args...) }
func (l *logger) Warnf(_ context.Context, format string, args ...any) { l.out("warn", format, args...) }
func (l *logger) Errorf(_ context.Context, format string, args ...any) {
	l.out("error", format, args...)
}
