package main

import (
	"context"
	"flag"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
)

// timeouts are the deadlines of `runtime` and `drive`, each a flag: a caller whose plugins start
// slowly (a TypeScript plugin cold-started on a busy machine) widens them.
type timeouts struct {
	// Handed to pkg/adaptation (and, via Configure, to plugins).
	registration, request time.Duration
	// How long to wait for the requested number of plugins to synchronize (and, in drive, for
	// the unsolicited updates).
	pluginWait time.Duration
	// Hard limit for the whole program, from its start.
	overall time.Duration
}

// timeoutFlags defines the timeouts' flags on fs.
func timeoutFlags(fs *flag.FlagSet) *timeouts {
	t := &timeouts{}
	fs.DurationVar(&t.registration, "registration-timeout", 5*time.Second, "plugin registration timeout handed to pkg/adaptation")
	fs.DurationVar(&t.request, "request-timeout", 3*time.Second, "plugin request timeout handed to pkg/adaptation")
	fs.DurationVar(&t.pluginWait, "plugin-wait", 20*time.Second, "how long to wait for the plugins to synchronize")
	fs.DurationVar(&t.overall, "overall", 30*time.Second, "hard limit for the whole program")
	return t
}

// apply arms the overall limit (failing as cmd) and hands the plugin timeouts to pkg/adaptation.
func (t *timeouts) apply(cmd string) {
	time.AfterFunc(t.overall, func() {
		fail("%s: did not finish within %v", cmd, t.overall)
	})
	adaptation.SetPluginRegistrationTimeout(t.registration)
	adaptation.SetPluginRequestTimeout(t.request)
}

// --- fixtures (PEERS.md) ----------------------------------------------------

func syncPod() *api.PodSandbox {
	return &api.PodSandbox{Id: "pod0", Name: "sync-pod", Uid: "uid-pod0", Namespace: "default"}
}

func syncContainer() *api.Container {
	return &api.Container{Id: "ctr0", PodSandboxId: "pod0", Name: "sync-ctr", State: api.ContainerState_CONTAINER_RUNNING}
}

// demoPod and demoContainer return fresh objects on every call: the
// adaptation edits requests in place while merging plugin answers, and every
// event must carry the fixtures unchanged.
func demoPod() *api.PodSandbox {
	return &api.PodSandbox{
		Id: "pod1", Name: "demo-pod", Uid: "uid-pod1", Namespace: "default",
		Labels: map[string]string{"app": "demo"},
	}
}

func demoContainer() *api.Container {
	return &api.Container{
		Id: "ctr1", PodSandboxId: "pod1", Name: "demo-ctr",
		State: api.ContainerState_CONTAINER_CREATED,
		Args:  []string{"sleep", "inf"},
		Env:   []string{"A=1"},
	}
}

// --- output shapes ----------------------------------------------------------

type eventResult struct {
	Event  string `json:"event"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Result any    `json:"result"`
}

type createResult struct {
	Annotations map[string]string `json:"annotations"`
	Env         []string          `json:"env"`
}

type updateEntry struct {
	Container string  `json:"container"`
	CPUShares *uint64 `json:"cpu_shares,omitempty"`
}

type updatesResult struct {
	Updates []updateEntry `json:"updates"`
}

type deprecationsLine struct {
	Deprecations []deprecationRecord `json:"deprecations"`
}

// deprecationRecord is one deprecation as containerd records it ("NRI plugin uses a deprecated
// interface."): the plugin, what is deprecated, and the adaptation's details.
type deprecationRecord struct {
	Plugin     string `json:"plugin"`
	Deprecated string `json:"deprecated"`
	Detail     string `json:"detail"`
}

func adjustmentResult(adj *api.ContainerAdjustment) createResult {
	res := createResult{Annotations: map[string]string{}, Env: []string{}}
	for k, v := range adj.GetAnnotations() {
		res.Annotations[k] = v
	}
	for _, kv := range adj.GetEnv() {
		res.Env = append(res.Env, kv.GetKey()+"="+kv.GetValue())
	}
	return res
}

func updateList(updates []*api.ContainerUpdate) updatesResult {
	res := updatesResult{Updates: []updateEntry{}}
	for _, u := range updates {
		if u == nil { // the adaptation appends nil when nobody touched the updated container
			continue
		}
		e := updateEntry{Container: u.GetContainerId()}
		if s := u.GetLinux().GetResources().GetCpu().GetShares(); s != nil {
			v := s.GetValue()
			e.CPUShares = &v
		}
		res.Updates = append(res.Updates, e)
	}
	return res
}

// --- problem and deprecation capture ---------------------------------------

// monitor collects, while armed, error-level adaptation log messages and
// notices of plugin connections closing: the adaptation drops a plugin that
// fails fatally (timeout, closed connection) and still reports success.
type monitor struct {
	mu       sync.Mutex
	armed    bool
	problems []string
}

func (m *monitor) hook(level, msg string) {
	dropped := strings.HasPrefix(msg, "connection to plugin ") && strings.HasSuffix(msg, " closed")
	if level != "error" && !dropped {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.armed {
		m.problems = append(m.problems, msg)
	}
}

func (m *monitor) arm(on bool) {
	m.mu.Lock()
	m.armed = on
	m.mu.Unlock()
}

func (m *monitor) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.problems
	m.problems = nil
	return p
}

// --- the runtime ------------------------------------------------------------

// startAdaptation creates and starts the Go runtime listening on socket (no pre-installed
// plugins), says it is ready, and returns once nplugins plugins have synchronized (synced gets
// one value for each, within wait) and the last of them has joined the active set. cmd names
// the command in failures.
func startAdaptation(cmd, socket, name, version string, syncFn adaptation.SyncFn, updateFn adaptation.UpdateFn, deps *deprecations, nplugins int, synced <-chan struct{}, wait time.Duration) *adaptation.Adaptation {
	opts := append([]adaptation.Option{
		adaptation.WithSocketPath(socket),
		adaptation.WithPluginPath("/nonexistent/nri-peer/plugins"),
		adaptation.WithPluginConfigPath("/nonexistent/nri-peer/conf.d"),
	}, versionOptions(deps)...)
	r, err := adaptation.New(name, version, syncFn, updateFn, opts...)
	if err != nil {
		fail("%s: cannot create adaptation: %v", cmd, err)
	}
	if err := r.Start(); err != nil {
		fail("%s: cannot start adaptation: %v", cmd, err)
	}
	emit(map[string]bool{"ready": true})
	deadline := time.After(wait)
	for n := 0; n < nplugins; n++ {
		select {
		case <-synced:
		case <-deadline:
			fail("%s: only %d of %d plugins synchronized within %v", cmd, n, nplugins, wait)
		}
	}
	// The last plugin is added to the active set right after its sync
	// callback returns; wait for that to complete.
	r.BlockPluginSync().Unblock()
	return r
}

func runRuntime(args []string) {
	fs := flag.NewFlagSet("runtime", flag.ExitOnError)
	socket := fs.String("socket", "", "socket path to listen on")
	nplugins := fs.Int("plugins", 1, "number of plugins to wait for")
	limits := timeoutFlags(fs)
	fs.Parse(args)
	if *socket == "" || fs.NArg() != 0 || *nplugins < 0 {
		fail("runtime: --socket PATH is required (and --plugins N >= 0)")
	}
	limits.apply("runtime")

	mon := &monitor{}
	logger := &stderrLogger{prefix: "[nri-peer runtime " + nriVersion + "]", hook: mon.hook}
	nrilog.Set(logger)

	var (
		mu        sync.Mutex
		syncCalls int
		syncedC   = make(chan struct{}, 64)
	)
	syncFn := func(ctx context.Context, cb adaptation.SyncCB) error {
		mu.Lock()
		preinstalled := syncCalls == 0 // Start() syncs the (empty) set of pre-installed plugins first
		syncCalls++
		mu.Unlock()
		updates, err := cb(ctx, []*api.PodSandbox{syncPod()}, []*api.Container{syncContainer()})
		if err != nil {
			logger.Warnf(ctx, "plugin synchronization failed: %v", err)
			return err
		}
		if len(updates) > 0 {
			logger.Infof(ctx, "plugin asked for %d container updates while synchronizing", len(updates))
		}
		if !preinstalled {
			syncedC <- struct{}{}
		}
		return nil
	}
	updateFn := func(ctx context.Context, updates []*adaptation.ContainerUpdate) ([]*adaptation.ContainerUpdate, error) {
		logger.Infof(ctx, "unsolicited UpdateContainers with %d updates (all accepted)", len(updates))
		return nil, nil
	}

	deps := &deprecations{}
	r := startAdaptation("runtime", *socket, "nri-wire-peer", nriVersion, syncFn, updateFn, deps, *nplugins, syncedC, limits.pluginWait)

	mon.arm(true)
	ctx := context.Background()
	allOK := true

	step := func(event string, call func() (any, error)) {
		if missingEvents[event] {
			return
		}
		res, err := call()
		problems := mon.take()
		line := eventResult{Event: event, OK: true, Result: res}
		switch {
		case err != nil:
			line.OK, line.Error, line.Result = false, err.Error(), struct{}{}
		case len(problems) > 0:
			line.OK, line.Error = false, strings.Join(problems, "; ")
		}
		if line.Result == nil {
			line.Result = struct{}{}
		}
		if !line.OK {
			allOK = false
		}
		emit(line)
	}
	empty := struct{}{}

	step("RunPodSandbox", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "RunPodSandbox")
	})
	step("CreateContainer", func() (any, error) {
		rpl, err := r.CreateContainer(ctx, &adaptation.CreateContainerRequest{Pod: demoPod(), Container: demoContainer()})
		if err != nil {
			return nil, err
		}
		return adjustmentResult(rpl.GetAdjust()), nil
	})
	step("PostCreateContainer", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "PostCreateContainer")
	})
	step("StartContainer", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "StartContainer")
	})
	step("PostStartContainer", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "PostStartContainer")
	})
	step("UpdateContainer", func() (any, error) {
		rpl, err := r.UpdateContainer(ctx, &adaptation.UpdateContainerRequest{Pod: demoPod(), Container: demoContainer()})
		if err != nil {
			return nil, err
		}
		return updateList(rpl.GetUpdate()), nil
	})
	step("PostUpdateContainer", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "PostUpdateContainer")
	})
	step("StopContainer", func() (any, error) {
		rpl, err := r.StopContainer(ctx, &adaptation.StopContainerRequest{Pod: demoPod(), Container: demoContainer()})
		if err != nil {
			return nil, err
		}
		return updateList(rpl.GetUpdate()), nil
	})
	step("RemoveContainer", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "RemoveContainer")
	})
	step("UpdatePodSandbox", func() (any, error) {
		return empty, updatePodSandbox(ctx, r)
	})
	step("PostUpdatePodSandbox", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "PostUpdatePodSandbox")
	})
	step("StopPodSandbox", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "StopPodSandbox")
	})
	step("RemovePodSandbox", func() (any, error) {
		return empty, stateChangeEraEvent(ctx, r, "RemovePodSandbox")
	})

	mon.arm(false)
	emit(deprecationsLine{Deprecations: deps.list()})

	r.Stop()
	if !allOK {
		os.Exit(1)
	}
	os.Exit(0)
}
