package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtime "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// benchFigures are the per-container times of `cri-client bench`, in µs, in order.
type benchFigures struct {
	CreateUs []float64 `json:"create_us"`
	StartUs  []float64 `json:"start_us"`
	// Annotations the first container's OCI spec carries under the bench plugins' prefix.
	PluginAnnotations int `json:"plugin_annotations"`
}

// runBench creates and starts containers in one host-network pod, one at a time, timing
// CreateContainer and StartContainer; each container is stopped and removed before the next.
//
//	cri-client --endpoint E bench --image IMG --count N --name TAG --logs DIR
func runBench(endpoint string, args []string) {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	image := fs.String("image", "", "container image")
	count := fs.Int("count", 10, "containers")
	name := fs.String("name", "bench", "pod name")
	logs := fs.String("logs", "/tmp", "pod log directory")
	fs.Parse(args)
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		benchFail("%s: %v", endpoint, err)
	}
	defer conn.Close()
	rt := runtime.NewRuntimeServiceClient(conn)
	ctx := context.Background()
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 60*time.Second) }
	ns := &runtime.NamespaceOption{Network: runtime.NamespaceMode_NODE, Pid: runtime.NamespaceMode_CONTAINER, Ipc: runtime.NamespaceMode_POD}
	podConfig := &runtime.PodSandboxConfig{
		Metadata:     &runtime.PodSandboxMetadata{Name: *name, Namespace: "nri-wire-bench", Uid: *name + "-uid"},
		LogDirectory: *logs,
		Linux:        &runtime.LinuxPodSandboxConfig{SecurityContext: &runtime.LinuxSandboxSecurityContext{NamespaceOptions: ns}},
	}
	c, cancel := call()
	pod, err := rt.RunPodSandbox(c, &runtime.RunPodSandboxRequest{Config: podConfig})
	cancel()
	if err != nil {
		benchFail("RunPodSandbox: %v", err)
	}
	defer func() {
		c, cancel := call()
		defer cancel()
		rt.StopPodSandbox(c, &runtime.StopPodSandboxRequest{PodSandboxId: pod.PodSandboxId})
		rt.RemovePodSandbox(c, &runtime.RemovePodSandboxRequest{PodSandboxId: pod.PodSandboxId})
	}()
	var out benchFigures
	for i := 0; i < *count; i++ {
		cfg := &runtime.ContainerConfig{
			Metadata: &runtime.ContainerMetadata{Name: fmt.Sprintf("c%d", i)},
			Image:    &runtime.ImageSpec{Image: *image},
			Command:  []string{"/probe", "pause"},
			LogPath:  fmt.Sprintf("c%d.log", i),
			Linux: &runtime.LinuxContainerConfig{
				Resources:       &runtime.LinuxContainerResources{CpuShares: 1024},
				SecurityContext: &runtime.LinuxContainerSecurityContext{NamespaceOptions: ns},
			},
		}
		c, cancel := call()
		t0 := time.Now()
		created, err := rt.CreateContainer(c, &runtime.CreateContainerRequest{PodSandboxId: pod.PodSandboxId, Config: cfg, SandboxConfig: podConfig})
		t1 := time.Now()
		if err != nil {
			cancel()
			benchFail("CreateContainer %d: %v", i, err)
		}
		_, err = rt.StartContainer(c, &runtime.StartContainerRequest{ContainerId: created.ContainerId})
		t2 := time.Now()
		if err != nil {
			cancel()
			benchFail("StartContainer %d: %v", i, err)
		}
		out.CreateUs = append(out.CreateUs, float64(t1.Sub(t0).Nanoseconds())/1e3)
		out.StartUs = append(out.StartUs, float64(t2.Sub(t1).Nanoseconds())/1e3)
		if i == 0 {
			out.PluginAnnotations = pluginAnnotations(c, rt, created.ContainerId)
		}
		if _, err := rt.StopContainer(c, &runtime.StopContainerRequest{ContainerId: created.ContainerId, Timeout: 0}); err != nil {
			cancel()
			benchFail("StopContainer %d: %v", i, err)
		}
		if _, err := rt.RemoveContainer(c, &runtime.RemoveContainerRequest{ContainerId: created.ContainerId}); err != nil {
			cancel()
			benchFail("RemoveContainer %d: %v", i, err)
		}
		cancel()
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

// pluginAnnotations counts the bench plugins' annotations in a container's OCI spec.
func pluginAnnotations(ctx context.Context, rt runtime.RuntimeServiceClient, id string) int {
	st, err := rt.ContainerStatus(ctx, &runtime.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		benchFail("ContainerStatus: %v", err)
	}
	var info struct {
		RuntimeSpec struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"runtimeSpec"`
	}
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil {
		benchFail("ContainerStatus info: %v", err)
	}
	n := 0
	for k := range info.RuntimeSpec.Annotations {
		if strings.HasPrefix(k, "bench.nri-wire.io/") {
			n++
		}
	}
	return n
}

func benchFail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cri-client bench: "+format+"\n", args...)
	os.Exit(1)
}
