// nri-bench: the Go side of `npm run bench`'s end-to-end section, on the upstream
// pkg/adaptation (runtime) and pkg/stub (plugin) of containerd/nri v0.12.5.
//
//	nri-bench runtime --socket PATH --plugins N --request FILE --seconds S
//	nri-bench runtime --serve --socket PATH        (cold-start target: reports each synced plugin)
//	nri-bench plugin --socket PATH --idx NN --name NAME
//	nri-bench codec --request FILE --millis MS    (encode/decode µs of the fixture request)
//
// The runtime prints "synced" once per plugin, then one JSON line with the cycle figures.
package main

import (
	"fmt"
	"os"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "nri-bench: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: nri-bench runtime|plugin|codec ...")
	}
	switch os.Args[1] {
	case "runtime":
		runRuntime(os.Args[2:])
	case "plugin":
		runPlugin(os.Args[2:])
	case "codec":
		runCodec(os.Args[2:])
	default:
		fail("unknown mode %q", os.Args[1])
	}
}
