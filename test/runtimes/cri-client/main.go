// Command cri-client makes the one CRI call crictl has no command for:
//
//	cri-client --endpoint unix:///run/x.sock update-pod-sandbox-resources POD_ID CPU_SHARES
//
// It prints nothing on success and the gRPC status on failure (exit 1). With `bench` it times
// container creation and start instead (bench.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtime "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	endpoint := flag.String("endpoint", "", "CRI endpoint, unix:///path")
	flag.Parse()
	args := flag.Args()
	if *endpoint != "" && len(args) > 0 && args[0] == "bench" {
		runBench(*endpoint, args[1:])
		return
	}
	if *endpoint == "" || len(args) != 3 || args[0] != "update-pod-sandbox-resources" {
		fmt.Fprintln(os.Stderr, "usage: cri-client --endpoint unix:///path update-pod-sandbox-resources POD_ID CPU_SHARES")
		os.Exit(2)
	}
	shares, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cri-client: cpu shares %q: %v\n", args[2], err)
		os.Exit(2)
	}
	conn, err := grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cri-client: %s: %v\n", *endpoint, err)
		os.Exit(1)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = runtime.NewRuntimeServiceClient(conn).UpdatePodSandboxResources(ctx, &runtime.UpdatePodSandboxResourcesRequest{
		PodSandboxId: args[1],
		Resources:    &runtime.LinuxContainerResources{CpuShares: shares},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cri-client: UpdatePodSandboxResources %s: %v\n", args[1], err)
		os.Exit(1)
	}
}
