// Command go-peer is the Go reference peer for nri-wire's ttrpc interop
// tests, built on github.com/containerd/ttrpc v1.2.10. See ../PEERS.md for
// the command-line contract.
package main

import (
	"flag"
	"fmt"
	"os"
)

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go-peer serve|call|bench --socket PATH [...]")
		os.Exit(2)
	}
	var rc int
	switch os.Args[1] {
	case "serve":
		rc = runServe(os.Args[2:])
	case "call":
		rc = runCall(os.Args[2:])
	case "bench":
		rc = runBench(os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "unknown subcommand %q\n", os.Args[1])
		rc = 2
	}
	os.Exit(rc)
}
