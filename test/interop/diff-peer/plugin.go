package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	stdnet "net"
	"os"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/containerd/nri/pkg/api"
	nrilog "github.com/containerd/nri/pkg/log"
	"github.com/containerd/nri/pkg/stub"
	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// scripted is a pkg/stub plugin acting out a Script. It implements every handler (so any event
// mask is allowed); a ttrpc server interceptor records each request and replaces the stub's
// answer with the scripted one, which lets the script send what the stub's handler signatures
// cannot express (an evict list, a status code, a validator's RPC error, a raw event mask).
type scripted struct {
	script Script
	rec    *recorder

	mu       sync.Mutex
	calls    map[string]int
	stub     stub.Stub
	connGone chan struct{}
}

// recorder appends canonical JSON lines to the record file.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recorder) add(v any) {
	line := canonLine(v)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.f.Write(line); err != nil {
		fail("plugin: cannot write record: %v", err)
	}
}

func runPlugin(args []string) {
	fs := flag.NewFlagSet("plugin", flag.ExitOnError)
	scriptPath := fs.String("script", "", "script file (JSON)")
	recordPath := fs.String("record", "", "record file to append to")
	socket := fs.String("socket", "", "runtime socket (external plugins)")
	name := fs.String("name", "", "plugin name (external plugins)")
	idx := fs.String("idx", "", "plugin index (external plugins)")
	fs.Parse(args)
	if *scriptPath == "" || *recordPath == "" {
		usage()
	}

	buf, err := os.ReadFile(*scriptPath)
	if err != nil {
		fail("plugin: %v", err)
	}
	p := &scripted{calls: map[string]int{}, connGone: make(chan struct{})}
	if err := json.Unmarshal(buf, &p.script); err != nil {
		fail("plugin: script %s: %v", *scriptPath, err)
	}
	f, err := os.OpenFile(*recordPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail("plugin: %v", err)
	}
	p.rec = &recorder{f: f}

	log := &logger{prefix: "[diff-peer plugin]"}
	nrilog.Set(log)

	launched := os.Getenv(api.PluginSocketEnvVar) != ""
	if launched {
		// What a runtime-launched plugin is given: its environment, exactly.
		// PWD is the shell wrapper's (../DIFF.md), not the runtime's.
		env := []string{}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PWD=") {
				env = append(env, kv)
			}
		}
		sort.Strings(env)
		p.rec.add(map[string]any{"env": env})
	}

	closed := make(chan struct{})
	opts := []stub.Option{
		stub.WithLogger(log),
		stub.WithOnClose(func() { close(closed) }),
		stub.WithDialer(func(path string) (stdnet.Conn, error) {
			conn, err := stdnet.Dial("unix", path)
			if err != nil {
				return nil, err
			}
			return &watchedConn{Conn: conn, gone: p.connGone}, nil
		}),
		stub.WithTTRPCOptions(
			[]ttrpc.ClientOpts{ttrpc.WithUnaryClientInterceptor(p.interceptClient)},
			[]ttrpc.ServerOpt{ttrpc.WithUnaryServerInterceptor(p.interceptServer)},
		),
	}
	if !launched {
		opts = append(opts, stub.WithSocketPath(*socket))
	}
	if *name != "" {
		opts = append(opts, stub.WithPluginName(*name))
	}
	if *idx != "" {
		opts = append(opts, stub.WithPluginIdx(*idx))
	}
	if !isNull(p.script.FailurePolicy) {
		policy := &api.FailurePolicy{}
		unmarshalInto(p.script.FailurePolicy, policy)
		opts = append(opts, stub.WithFailurePolicy(policy))
	}

	s, err := stub.New(p, opts...)
	if err != nil {
		fail("plugin: %v", err)
	}
	p.stub = s
	if err := s.Start(context.Background()); err != nil {
		// A runtime kills a launched plugin it gives up on, so only an external one reliably
		// lives to say why.
		// A refused configuration (an error, or a mask with bits no event has) races with the
		// runtime closing the connection while the registration answer is under way (Go's own
		// runtime and stub do), so it is not recorded.
		refused := p.script.ConfigureError != "" || (p.script.RawEvents != nil && api.EventMask(*p.script.RawEvents)&^api.ValidEvents != 0)
		if !launched && !refused {
			p.rec.add(map[string]any{"startError": err.Error()})
		}
		os.Exit(1)
	}
	if !launched {
		go p.commands()
	}
	<-closed
	os.Exit(0)
}

// watchedConn tells when the runtime's side of the connection went away, which the stub
// reports only once registration has given up.
type watchedConn struct {
	stdnet.Conn
	gone chan struct{}
	once sync.Once
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.once.Do(func() { close(c.gone) })
	}
	return n, err
}

// commands serves the driver's requests on stdin, one JSON object a line:
// {"unsolicited":[ContainerUpdate...]} calls UpdateContainers; each is acknowledged on stdout.
func (p *scripted) commands() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var cmd struct {
			Unsolicited []json.RawMessage `json:"unsolicited"`
		}
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			fail("plugin: bad command %q: %v", in.Text(), err)
		}
		p.updateContainers("unsolicited", cmd.Unsolicited)
		emit(map[string]any{"ack": "unsolicited"})
	}
}

// updateContainers sends an unsolicited update and records what the runtime answered.
func (p *scripted) updateContainers(when string, raw []json.RawMessage) {
	updates := make([]*api.ContainerUpdate, 0, len(raw))
	for _, u := range raw {
		m := &api.ContainerUpdate{}
		unmarshalInto(u, m)
		updates = append(updates, m)
	}
	failed, err := p.stub.UpdateContainers(updates)
	res := map[string]any{"failed": canonList(failed)}
	if err != nil {
		res["error"] = err.Error()
	}
	p.rec.add(map[string]any{"updateContainers": res, "during": when})
}

func canonList[T proto.Message](list []T) []any {
	out := make([]any, 0, len(list))
	for _, m := range list {
		out = append(out, canonProto(m))
	}
	return out
}

// interceptClient rewrites the identity sent in RegisterPlugin, or holds the call back until
// the runtime gives up on it, as the script says.
func (p *scripted) interceptClient(ctx context.Context, req *ttrpc.Request, resp *ttrpc.Response, info *ttrpc.UnaryClientInfo, invoke ttrpc.Invoker) error {
	if path.Base(info.FullMethod) != "RegisterPlugin" {
		return invoke(ctx, req, resp)
	}
	if p.script.HangRegister {
		// Not the call's own deadline: pkg/stub gives RegisterPlugin its default registration
		// timeout (5 s), which must not end the hold before the runtime's timeout does.
		<-p.connGone
		return ttrpc.ErrClosed
	}
	if p.script.RegisterName != nil || p.script.RegisterIdx != nil {
		r := &api.RegisterPluginRequest{}
		if err := proto.Unmarshal(req.Payload, r); err != nil {
			return err
		}
		if s := p.script.RegisterName; s != nil {
			r.PluginName = *s
		}
		if s := p.script.RegisterIdx; s != nil {
			r.PluginIdx = *s
		}
		buf, err := proto.Marshal(r)
		if err != nil {
			return err
		}
		req.Payload = buf
	}
	return invoke(ctx, req, resp)
}

// action picks the script's action for the n-th call of method (nil: the stub's answer).
func (p *scripted) action(method string) *Action {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.calls[method]
	p.calls[method] = n + 1
	if method == "Synchronize" {
		return p.script.Synchronize
	}
	list := p.script.On[method]
	if len(list) == 0 {
		return nil
	}
	if n >= len(list) {
		n = len(list) - 1
	}
	return &list[n]
}

func (p *scripted) interceptServer(ctx context.Context, unmarshal ttrpc.Unmarshaler, info *ttrpc.UnaryServerInfo, method ttrpc.Method) (any, error) {
	name := path.Base(info.FullMethod)
	var req proto.Message
	capture := func(v any) error {
		err := unmarshal(v)
		req, _ = v.(proto.Message)
		if c, ok := v.(*api.ConfigureRequest); ok && err == nil {
			// Recorded before the stub's handler runs: a refused configuration can end the
			// process before the handler returns. The runtime's NRI version is its own business.
			p.rec.add(map[string]any{"method": name, "request": map[string]any{
				"config":              c.Config,
				"runtimeName":         c.RuntimeName,
				"runtimeVersion":      c.RuntimeVersion,
				"registrationTimeout": c.RegistrationTimeout,
				"requestTimeout":      c.RequestTimeout,
			}})
		}
		return err
	}
	resp, err := method(ctx, capture)

	switch name {
	case "Configure":
		if err == nil && p.script.RawEvents != nil {
			resp.(*api.ConfigureResponse).Events = *p.script.RawEvents
		}
		return resp, err
	case "Shutdown":
		p.rec.add(map[string]any{"method": name})
		return resp, err
	}

	if req != nil {
		p.rec.add(map[string]any{"method": name, "request": canonProto(req)})
	} else {
		p.rec.add(map[string]any{"method": name})
	}
	if name == "Synchronize" && req.(*api.SynchronizeRequest).More {
		return resp, err // a partial chunk: only the final one gets the script's answer
	}
	a := p.action(name)
	if a == nil {
		return resp, err
	}
	if a.Exit {
		os.Exit(0)
	}
	if len(a.UpdateContainers) > 0 {
		p.updateContainers(name, a.UpdateContainers)
	}
	if a.Hang {
		select {} // the process ends with the scenario
	}
	if a.Undecodable {
		// Field 1 holding the byte 0x78: in any response whose field 1 is a message, a field 15
		// varint with its value missing.
		return &api.Mount{Destination: "x"}, nil
	}
	if a.Error != "" {
		code := codes.Unknown
		if a.Code != 0 {
			code = codes.Code(a.Code)
		}
		return nil, status.Error(code, a.Error)
	}
	if !isNull(a.Response) {
		m := resp.(proto.Message).ProtoReflect().New().Interface()
		unmarshalInto(a.Response, m)
		return m, nil
	}
	return resp, err
}

// eventMask is the subscription the script asks for.
func (p *scripted) eventMask() (api.EventMask, error) {
	if p.script.Events == nil {
		all := api.EventMask(0)
		for e := api.Event_RUN_POD_SANDBOX; e <= api.Event_LAST-1; e++ {
			if e != api.Event_VALIDATE_CONTAINER_ADJUSTMENT {
				all.Set(e)
			}
		}
		return all, nil
	}
	names := make([]string, 0, len(p.script.Events))
	for _, n := range p.script.Events {
		names = append(names, strings.ToLower(n))
	}
	return api.ParseEventMask(names...)
}

// --- pkg/stub handlers: every one, so that any subscription is accepted ---

func (p *scripted) Configure(_ context.Context, _, _, _ string) (api.EventMask, error) {
	if p.script.ConfigureError != "" {
		return 0, errorString(p.script.ConfigureError)
	}
	return p.eventMask()
}

type errorString string

func (e errorString) Error() string { return string(e) }

func (p *scripted) Synchronize(context.Context, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (p *scripted) Shutdown(context.Context)                                    {}
func (p *scripted) RunPodSandbox(context.Context, *api.PodSandbox) error        { return nil }
func (p *scripted) StopPodSandbox(context.Context, *api.PodSandbox) error       { return nil }
func (p *scripted) RemovePodSandbox(context.Context, *api.PodSandbox) error     { return nil }
func (p *scripted) PostUpdatePodSandbox(context.Context, *api.PodSandbox) error { return nil }
func (p *scripted) UpdatePodSandbox(context.Context, *api.PodSandbox, *api.LinuxResources, *api.LinuxResources) error {
	return nil
}
func (p *scripted) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, nil
}
func (p *scripted) PostCreateContainer(context.Context, *api.PodSandbox, *api.Container) error {
	return nil
}
func (p *scripted) StartContainer(context.Context, *api.PodSandbox, *api.Container) error { return nil }
func (p *scripted) PostStartContainer(context.Context, *api.PodSandbox, *api.Container) error {
	return nil
}
func (p *scripted) UpdateContainer(context.Context, *api.PodSandbox, *api.Container, *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (p *scripted) PostUpdateContainer(context.Context, *api.PodSandbox, *api.Container) error {
	return nil
}
func (p *scripted) StopContainer(context.Context, *api.PodSandbox, *api.Container) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (p *scripted) RemoveContainer(context.Context, *api.PodSandbox, *api.Container) error {
	return nil
}
func (p *scripted) ValidateContainerAdjustment(context.Context, *api.ValidateContainerAdjustmentRequest) error {
	return nil
}
