// Command probe is the one program in the test image: the sandbox's pause process, the
// container's workload, and what the test runs inside the container to read back what the
// plugins adjusted. It is static so the image needs nothing else.
//
//	probe pause         sleep until SIGTERM or SIGINT
//	probe env           print the environment, one VAR=value a line
//	probe cat FILE...   print the first of the files that can be read
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe pause | env | cat FILE...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "pause":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
		<-c
	case "env":
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
	case "cat":
		// cgroup v1 and v2 name the same value in different files: the first readable wins.
		for _, f := range os.Args[2:] {
			if b, err := os.ReadFile(f); err == nil {
				fmt.Printf("%s: %s", f, b)
				return
			}
		}
		fmt.Fprintf(os.Stderr, "probe: none of %v can be read\n", os.Args[2:])
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "probe: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}
