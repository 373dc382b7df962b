package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
	validator "github.com/containerd/nri/plugins/default-validator/builtin"
	"google.golang.org/protobuf/proto"
)

const (
	runtimeName    = "nri-wire-diff"
	runtimeVersion = "0.0.1"
	// How long any one wait of the driver may take before the run is declared stuck.
	stepLimit = 20 * time.Second
)

// driver runs one scenario on pkg/adaptation.
type driver struct {
	sc     *Scenario
	work   string
	self   string // this executable, started again as the scripted plugin
	r      *adaptation.Adaptation
	pods   []*api.PodSandbox
	ctrs   []*api.Container
	synced chan error

	mu      sync.Mutex
	syncTag string                   // whose synchronization the callback reports: set before a plugin starts
	syncing string                   // the syncTag of the last synchronization the callback began
	closedC map[string]chan struct{} // plugin name -> closed once the runtime saw its connection go

	plugins []*extPlugin // external plugins in the order they were started
	records []string     // plugin ids with a record file, in output order

	logMu sync.Mutex
	logs  map[string][]string // what pkg/adaptation logged, by level (info, warn, error)
}

type extPlugin struct {
	id     string
	cmd    *exec.Cmd
	stdin  *json.Encoder
	acks   chan struct{}
	exited chan struct{}
}

func runRuntime(args []string) {
	fs := flag.NewFlagSet("runtime", flag.ExitOnError)
	scenario := fs.String("scenario", "", "scenario file")
	work := fs.String("work", "", "empty work directory")
	fs.Parse(args)
	if *scenario == "" || *work == "" {
		usage()
	}
	sc, err := loadScenario(*scenario)
	if err != nil {
		fail("%v", err)
	}
	self, err := os.Executable()
	if err != nil {
		fail("%v", err)
	}
	d := &driver{sc: sc, work: *work, self: self, synced: make(chan error, 1), closedC: map[string]chan struct{}{}}
	d.run()
}

func (d *driver) path(elem ...string) string {
	return filepath.Join(append([]string{d.work}, elem...)...)
}

// noticeClosed watches the adaptation's log for a plugin connection going away: the only
// signal pkg/adaptation gives of it.
func (d *driver) noticeClosed(_ string, msg string) {
	var name string
	if _, err := fmt.Sscanf(msg, "connection to plugin %q closed", &name); err != nil {
		return
	}
	d.closedChan(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.closedC[name]:
	default:
		close(d.closedC[name])
	}
}

func (d *driver) closedChan(name string) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closedC[name] == nil {
		d.closedC[name] = make(chan struct{})
	}
	return d.closedC[name]
}

func (d *driver) run() {
	nrilog.Set(&logger{prefix: "[diff-peer runtime]", hook: func(level, msg string) {
		d.noticeClosed(level, msg)
		d.recordLog(level, msg)
	}})
	if d.sc.RegistrationTimeoutMs > 0 {
		adaptation.SetPluginRegistrationTimeout(time.Duration(d.sc.RegistrationTimeoutMs) * time.Millisecond)
	}
	if d.sc.RequestTimeoutMs > 0 {
		adaptation.SetPluginRequestTimeout(time.Duration(d.sc.RequestTimeoutMs) * time.Millisecond)
	}
	for _, raw := range d.sc.State.Pods {
		m := &api.PodSandbox{}
		unmarshalInto(raw, m)
		d.pods = append(d.pods, m)
	}
	for _, raw := range d.sc.State.Containers {
		m := &api.Container{}
		unmarshalInto(raw, m)
		d.ctrs = append(d.ctrs, m)
	}
	pluginDir := d.preparePluginDir()

	opts := []adaptation.Option{
		adaptation.WithMetrics(recordingMetrics{}),
		adaptation.WithSocketPath(d.path("nri.sock")),
		adaptation.WithPluginPath(pluginDir),
		adaptation.WithPluginConfigPath(d.path("conf.d")),
	}
	if v := d.sc.DefaultValidator; v != nil {
		opts = append(opts, adaptation.WithDefaultValidator(&validator.DefaultValidatorConfig{
			Enable:                                v.Enable,
			RejectOCIHookAdjustment:               v.RejectOCIHookAdjustment,
			RejectRuntimeDefaultSeccompAdjustment: v.RejectRuntimeDefaultSeccompAdjustment,
			RejectUnconfinedSeccompAdjustment:     v.RejectUnconfinedSeccompAdjustment,
			RejectCustomSeccompAdjustment:         v.RejectCustomSeccompAdjustment,
			RejectNamespaceAdjustment:             v.RejectNamespaceAdjustment,
			RejectSysctlAdjustment:                v.RejectSysctlAdjustment,
			RequiredPlugins:                       v.RequiredPlugins,
			TolerateMissingAnnotation:             v.TolerateMissingPluginsAnnotation,
		}))
	}
	r, err := adaptation.New(runtimeName, runtimeVersion, d.syncFn, d.updateFn, opts...)
	if err != nil {
		fail("cannot create adaptation: %v", err)
	}
	d.r = r
	d.setSyncTag("preinstalled")
	if err := r.Start(); err != nil {
		emit(map[string]any{"start": map[string]any{"error": strings.ReplaceAll(err.Error(), d.work, "<work>")}})
		d.finish()
		return
	}
	select {
	case <-d.synced: // Start synchronizes the pre-installed plugins, even when there is none
	default:
		fail("Start did not call the synchronize callback")
	}

	for i := range d.sc.Plugins {
		d.connect(&d.sc.Plugins[i])
	}
	for _, step := range d.sc.Steps {
		d.step(step)
	}
	d.finish()
}

// preparePluginDir writes the plugin and configuration directories; a scenario without
// pre-installed plugins gets a directory that does not exist (which is not an error).
func (d *driver) preparePluginDir() string {
	for _, dir := range []string{"scripts", "records", "conf.d"} {
		if err := os.MkdirAll(d.path(dir), 0o755); err != nil {
			fail("%v", err)
		}
	}
	for name, content := range d.sc.Conf {
		write(d.path("conf.d", name), content, 0o644)
	}
	if len(d.sc.Preinstalled) == 0 && len(d.sc.PluginFiles) == 0 {
		return d.path("no-plugins")
	}
	dir := d.path("plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail("%v", err)
	}
	for _, f := range d.sc.PluginFiles {
		mode := os.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		write(filepath.Join(dir, f.Name), f.Content, mode)
	}
	for _, p := range d.sc.Preinstalled {
		script := d.writeScript(p.File, p.Script)
		// The runtime starts it with nothing but the NRI variables: a shell wrapper adds the
		// arguments and keeps that environment as it is.
		write(filepath.Join(dir, p.File), fmt.Sprintf("#!/bin/sh\nexec %q plugin --script %q --record %q\n",
			d.self, script, d.recordPath(p.File)), 0o755)
		d.records = append(d.records, p.File)
	}
	return dir
}

func write(path, content string, mode os.FileMode) {
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		fail("%v", err)
	}
}

func (d *driver) writeScript(id string, s Script) string {
	buf, err := json.Marshal(s)
	if err != nil {
		fail("%v", err)
	}
	p := d.path("scripts", id+".json")
	write(p, string(buf), 0o644)
	return p
}

func (d *driver) recordPath(id string) string { return d.path("records", id+".jsonl") }

// syncFn synchronizes a plugin (or, from Start, all pre-installed ones) with the scenario's
// state and prints the updates the plugins asked for.
func (d *driver) syncFn(ctx context.Context, cb adaptation.SyncCB) error {
	d.mu.Lock()
	tag := d.syncTag
	d.syncing = tag
	d.mu.Unlock()
	if d.sc.SyncError != "" {
		return errors.New(d.sc.SyncError)
	}
	updates, err := cb(ctx, d.pods, d.ctrs)
	if err != nil {
		emit(map[string]any{"sync": tag, "error": err.Error()})
	} else {
		emit(map[string]any{"sync": tag, "update": canonList(updates)})
	}
	d.synced <- err
	return err
}

// setSyncTag names the plugin the next synchronization is for.
func (d *driver) setSyncTag(tag string) {
	d.mu.Lock()
	d.syncTag = tag
	d.mu.Unlock()
}

// syncBegun tells whether the callback has begun synchronizing plugin `id`.
func (d *driver) syncBegun(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.syncing == id
}

// updateFn prints an unsolicited update and answers as the scenario says.
func (d *driver) updateFn(_ context.Context, updates []*adaptation.ContainerUpdate) ([]*adaptation.ContainerUpdate, error) {
	emit(map[string]any{"updateFn": canonList(updates)})
	var failed []*adaptation.ContainerUpdate
	for _, raw := range d.sc.UpdateFn.Failed {
		m := &api.ContainerUpdate{}
		unmarshalInto(raw, m)
		failed = append(failed, m)
	}
	if d.sc.UpdateFn.Error != "" {
		return failed, errorString(d.sc.UpdateFn.Error)
	}
	return failed, nil
}

// connect starts an external plugin and waits until the runtime synchronized it or the
// plugin process ended.
func (d *driver) connect(e *External) {
	id := e.ID()
	script := d.writeScript(id, e.Script)
	cmd := exec.Command(d.self, "plugin", "--script", script, "--record", d.recordPath(id),
		"--socket", d.path("nri.sock"), "--name", e.Name, "--idx", e.Idx)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fail("%v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fail("%v", err)
	}
	p := &extPlugin{id: id, cmd: cmd, stdin: json.NewEncoder(stdin), acks: make(chan struct{}, 16), exited: make(chan struct{})}
	d.setSyncTag(id)
	if err := cmd.Start(); err != nil {
		fail("cannot start plugin %s: %v", id, err)
	}
	d.plugins = append(d.plugins, p)
	d.records = append(d.records, id)
	go func() {
		in := bufio.NewScanner(stdout)
		for in.Scan() {
			p.acks <- struct{}{}
		}
	}()
	go func() {
		cmd.Wait()
		close(p.exited)
	}()

	select {
	case err := <-d.synced:
		// The plugin joins the active set right after the callback returns.
		d.r.BlockPluginSync().Unblock()
		if err == nil {
			emit(map[string]any{"plugin": id, "registered": true})
			return
		}
		select { // the runtime closes a plugin it failed to synchronize
		case <-p.exited:
			emit(map[string]any{"plugin": id, "exited": true})
		case <-time.After(stepLimit):
			fail("plugin %s did not exit after a failed synchronization", id)
		}
	case <-p.exited:
		// The runtime can close a plugin it failed to synchronize before the callback has
		// reported the failure (seen on a loaded machine): once the callback has begun with this
		// plugin, wait for its report, so that its line comes first and the next plugin does not
		// take it for its own.
		if d.syncBegun(id) {
			select {
			case <-d.synced:
			case <-time.After(stepLimit):
				fail("plugin %s exited, but its synchronization never ended", id)
			}
		} else {
			select { // nothing is under way: drop what a refused plugin may have left
			case <-d.synced:
			default:
			}
		}
		emit(map[string]any{"plugin": id, "exited": true})
	case <-time.After(stepLimit):
		fail("plugin %s neither synchronized nor exited", id)
	}
}

func (d *driver) find(id string) *extPlugin {
	for _, p := range d.plugins {
		if p.id == id {
			return p
		}
	}
	fail("no external plugin %s", id)
	return nil
}

func (d *driver) step(s Step) {
	switch {
	case s.Event != "":
		d.event(s.Event, s.Request)
	case s.Kill != "":
		p := d.find(s.Kill)
		closed := d.closedChan(s.Kill)
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		select {
		case <-closed:
		case <-time.After(stepLimit):
			fail("runtime did not notice plugin %s going away", s.Kill)
		}
		emit(map[string]any{"plugin": s.Kill, "killed": true})
	case s.Unsolicited != "":
		p := d.find(s.Unsolicited)
		if err := p.stdin.Encode(map[string]any{"unsolicited": s.Update}); err != nil {
			fail("%v", err)
		}
		select {
		case <-p.acks:
		case <-time.After(stepLimit):
			fail("plugin %s did not acknowledge", s.Unsolicited)
		}
	case s.Connect != nil:
		d.connect(s.Connect)
	default:
		fail("empty step")
	}
}

// event runs one lifecycle event and prints its outcome.
func (d *driver) event(name string, raw json.RawMessage) {
	ctx := context.Background()
	var (
		resp proto.Message
		err  error
	)
	switch name {
	case "RunPodSandbox":
		req := &api.RunPodSandboxRequest{}
		unmarshalInto(raw, req)
		err = d.r.RunPodSandbox(ctx, req)
	case "UpdatePodSandbox":
		req := &api.UpdatePodSandboxRequest{}
		unmarshalInto(raw, req)
		var rpl *api.UpdatePodSandboxResponse
		if rpl, err = d.r.UpdatePodSandbox(ctx, req); err == nil {
			resp = rpl
		}
	case "PostUpdatePodSandbox":
		req := &api.PostUpdatePodSandboxRequest{}
		unmarshalInto(raw, req)
		err = d.r.PostUpdatePodSandbox(ctx, req)
	case "StopPodSandbox":
		req := &api.StopPodSandboxRequest{}
		unmarshalInto(raw, req)
		err = d.r.StopPodSandbox(ctx, req)
	case "RemovePodSandbox":
		req := &api.RemovePodSandboxRequest{}
		unmarshalInto(raw, req)
		err = d.r.RemovePodSandbox(ctx, req)
	case "CreateContainer":
		req := &api.CreateContainerRequest{}
		unmarshalInto(raw, req)
		var rpl *api.CreateContainerResponse
		if rpl, err = d.r.CreateContainer(ctx, req); err == nil {
			resp = rpl
		}
	case "PostCreateContainer":
		req := &api.PostCreateContainerRequest{}
		unmarshalInto(raw, req)
		err = d.r.PostCreateContainer(ctx, req)
	case "StartContainer":
		req := &api.StartContainerRequest{}
		unmarshalInto(raw, req)
		err = d.r.StartContainer(ctx, req)
	case "PostStartContainer":
		req := &api.PostStartContainerRequest{}
		unmarshalInto(raw, req)
		err = d.r.PostStartContainer(ctx, req)
	case "UpdateContainer":
		req := &api.UpdateContainerRequest{}
		unmarshalInto(raw, req)
		var rpl *api.UpdateContainerResponse
		if rpl, err = d.r.UpdateContainer(ctx, req); err == nil {
			resp = rpl // a nil element (nobody updated the target) is {} in protobuf JSON
		}
	case "PostUpdateContainer":
		req := &api.PostUpdateContainerRequest{}
		unmarshalInto(raw, req)
		err = d.r.PostUpdateContainer(ctx, req)
	case "StopContainer":
		req := &api.StopContainerRequest{}
		unmarshalInto(raw, req)
		var rpl *api.StopContainerResponse
		if rpl, err = d.r.StopContainer(ctx, req); err == nil {
			resp = rpl
		}
	case "RemoveContainer":
		req := &api.RemoveContainerRequest{}
		unmarshalInto(raw, req)
		err = d.r.RemoveContainer(ctx, req)
	default:
		fail("unknown event %q", name)
	}
	switch {
	case err != nil:
		emit(map[string]any{"event": name, "error": err.Error()})
	case resp != nil:
		emit(map[string]any{"event": name, "response": canonProto(resp)})
	default:
		emit(map[string]any{"event": name})
	}
}

// recordingMetrics prints every call of the adaptation's Metrics hooks as a line, in the order
// they come; a latency only as a line (its value depends on the machine).
type recordingMetrics struct{}

func (recordingMetrics) RecordPluginInvocation(plugin, op string, err error) {
	line := map[string]any{"metric": "invocation", "plugin": plugin, "op": op}
	if err != nil {
		line["error"] = err.Error()
	}
	emit(line)
}

func (recordingMetrics) RecordPluginLatency(plugin, op string, latency time.Duration) {
	if latency < 0 {
		fail("negative latency %v for %s %s", latency, plugin, op)
	}
	emit(map[string]any{"metric": "latency", "plugin": plugin, "op": op})
}

func (recordingMetrics) RecordPluginAdjustments(plugin, op string, adjust *adaptation.ContainerAdjustment, updates, evicts int) {
	line := map[string]any{"metric": "adjustments", "plugin": plugin, "op": op, "updates": updates, "evicts": evicts}
	if adjust != nil {
		line["adjust"] = canonProto(adjust)
	}
	emit(line)
}

func (recordingMetrics) UpdatePluginCount(count int) {
	emit(map[string]any{"metric": "count", "count": count})
}

// finish stops the runtime and every plugin, then prints each plugin's record.
// recordLog keeps a line pkg/adaptation logged at info, warn or error level (debug lines are
// left out), for the "log" lines finish prints.
func (d *driver) recordLog(level, msg string) {
	if level == "debug" {
		return
	}
	d.logMu.Lock()
	defer d.logMu.Unlock()
	if d.logs == nil {
		d.logs = map[string][]string{}
	}
	d.logs[level] = append(d.logs[level], strings.ReplaceAll(strings.TrimRight(msg, "\n"), d.work, "<work>"))
}

// finish stops the runtime and every plugin, then prints each plugin's record and, per level,
// what the runtime logged (sorted: goroutines log in no fixed order).
func (d *driver) finish() {
	d.r.Stop()
	for _, p := range d.plugins {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
	for _, id := range d.records {
		buf, err := os.ReadFile(d.recordPath(id))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			fail("%v", err)
		}
		for _, line := range strings.Split(strings.TrimRight(string(buf), "\n"), "\n") {
			if line != "" {
				emit(map[string]any{"plugin": id, "record": decodeJSON([]byte(line))})
			}
		}
	}
	d.logMu.Lock()
	for _, level := range []string{"error", "warn", "info"} {
		lines := append([]string{}, d.logs[level]...)
		sort.Strings(lines)
		emit(map[string]any{"log": level, "lines": lines})
	}
	d.logMu.Unlock()
	os.Exit(0)
}
