// adapt-peer runs the real containerd/nri v0.12.5 runtime adaptation (pkg/adaptation) on
// scenarios read as JSON lines from stdin, with scripted in-process (builtin) plugins, and prints
// one JSON line per scenario: what each plugin and validator received, and the merged response
// or the error text. It is the judge of nri-wire's merge engine (src/runtime).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/adaptation/builtin"
	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/log"
	validator "github.com/containerd/nri/plugins/default-validator/builtin"
	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// scenario is one event through scripted plugins.
type scenario struct {
	// Event is CreateContainer, UpdateContainer or StopContainer.
	Event string `json:"event"`
	// Request is the event's request in protobuf JSON.
	Request json.RawMessage `json:"request"`
	// Plugins in any order; the adaptation sorts them by index.
	Plugins []scriptedPlugin `json:"plugins"`
	// DefaultValidator is the default validator's configuration (its YAML keys), if any.
	DefaultValidator json.RawMessage `json:"defaultValidator,omitempty"`
}

// scriptedPlugin answers the event with a fixed reply or error, and may validate.
type scriptedPlugin struct {
	Idx  string `json:"idx"`
	Name string `json:"name"`
	// Handles says whether the plugin handles the event at all (default true).
	Handles *bool `json:"handles,omitempty"`
	// Reply is the event's response in protobuf JSON; absent or null is a nil reply.
	Reply json.RawMessage `json:"reply,omitempty"`
	// Error makes the handler fail with this text.
	Error *string `json:"error,omitempty"`
	// Validate makes the plugin a validator with this verdict.
	Validate *verdict `json:"validate,omitempty"`
}

type verdict struct {
	Reject bool   `json:"reject"`
	Reason string `json:"reason"`
}

type received struct {
	Plugin  string          `json:"plugin"`
	Request json.RawMessage `json:"request"`
}

type outcome struct {
	Received    []received      `json:"received"`
	Validations []received      `json:"validations"`
	Response    json.RawMessage `json:"response"`
	Error       *string         `json:"error"`
}

type quietLogger struct{}

func (quietLogger) Debugf(context.Context, string, ...interface{}) {}
func (quietLogger) Infof(context.Context, string, ...interface{})  {}
func (quietLogger) Warnf(context.Context, string, ...interface{})  {}
func (quietLogger) Errorf(context.Context, string, ...interface{}) {}

func main() {
	log.Set(quietLogger{})
	empty, err := os.MkdirTemp("", "adapt-peer-")
	must(err)
	defer os.RemoveAll(empty)

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var s scenario
		must(json.Unmarshal(in.Bytes(), &s))
		line, err := json.Marshal(run(&s, empty))
		must(err)
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
	must(in.Err())
}

func run(s *scenario, dir string) *outcome {
	o := &outcome{Received: []received{}, Validations: []received{}}
	var mu sync.Mutex
	record := func(list *[]received, plugin string, m proto.Message) {
		b, err := protojson.Marshal(m)
		must(err)
		mu.Lock()
		*list = append(*list, received{plugin, b})
		mu.Unlock()
	}

	var plugins []*builtin.BuiltinPlugin
	for i := range s.Plugins {
		p := &s.Plugins[i]
		id := p.Idx + "-" + p.Name
		h := builtin.BuiltinHandlers{}
		if p.Handles == nil || *p.Handles {
			switch s.Event {
			case "CreateContainer":
				h.CreateContainer = func(_ context.Context, req *api.CreateContainerRequest) (*api.CreateContainerResponse, error) {
					record(&o.Received, id, req)
					return reply(p, &api.CreateContainerResponse{})
				}
			case "UpdateContainer":
				h.UpdateContainer = func(_ context.Context, req *api.UpdateContainerRequest) (*api.UpdateContainerResponse, error) {
					record(&o.Received, id, req)
					return reply(p, &api.UpdateContainerResponse{})
				}
			case "StopContainer":
				h.StopContainer = func(_ context.Context, req *api.StopContainerRequest) (*api.StopContainerResponse, error) {
					record(&o.Received, id, req)
					return reply(p, &api.StopContainerResponse{})
				}
			default:
				panic("unknown event " + s.Event)
			}
		}
		if v := p.Validate; v != nil {
			h.ValidateContainerAdjustment = func(_ context.Context, req *api.ValidateContainerAdjustmentRequest) error {
				record(&o.Validations, id, req)
				if v.Reject {
					return errors.New(v.Reason)
				}
				return nil
			}
		}
		plugins = append(plugins, &builtin.BuiltinPlugin{Base: p.Name, Index: p.Idx, Handlers: h})
	}

	opts := []adaptation.Option{
		adaptation.WithPluginPath(dir),
		adaptation.WithPluginConfigPath(dir),
		adaptation.WithDisabledExternalConnections(),
		adaptation.WithBuiltinPlugins(plugins...),
	}
	if len(s.DefaultValidator) > 0 {
		cfg := &validator.DefaultValidatorConfig{}
		// JSON is YAML, and the configuration's keys are its YAML tags.
		must(yaml.Unmarshal(s.DefaultValidator, cfg))
		opts = append(opts, adaptation.WithDefaultValidator(cfg))
	}
	syncFn := func(ctx context.Context, cb adaptation.SyncCB) error {
		_, err := cb(ctx, nil, nil)
		return err
	}
	updateFn := func(context.Context, []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
		return nil, nil
	}
	r, err := adaptation.New("adapt-peer", "0.0.0", syncFn, updateFn, opts...)
	must(err)
	must(r.Start())
	defer r.Stop()

	ctx := context.Background()
	var rpl proto.Message
	switch s.Event {
	case "CreateContainer":
		req := &api.CreateContainerRequest{}
		must(protojson.Unmarshal(s.Request, req))
		rpl, err = r.CreateContainer(ctx, req)
	case "UpdateContainer":
		req := &api.UpdateContainerRequest{}
		must(protojson.Unmarshal(s.Request, req))
		rpl, err = r.UpdateContainer(ctx, req)
	case "StopContainer":
		req := &api.StopContainerRequest{}
		must(protojson.Unmarshal(s.Request, req))
		rpl, err = r.StopContainer(ctx, req)
	}
	if err != nil {
		text := err.Error()
		o.Error = &text
		o.Response = json.RawMessage("null")
		return o
	}
	b, err := protojson.Marshal(rpl)
	must(err)
	o.Response = b
	return o
}

// reply decodes a plugin's scripted reply into a fresh message, as a plugin's answer arrives.
func reply[T proto.Message](p *scriptedPlugin, m T) (T, error) {
	var zero T
	if p.Error != nil {
		return zero, errors.New(*p.Error)
	}
	if len(p.Reply) == 0 || string(p.Reply) == "null" {
		return zero, nil
	}
	if err := protojson.Unmarshal(p.Reply, m); err != nil {
		panic(fmt.Sprintf("plugin %s-%s: bad reply: %v", p.Idx, p.Name, err))
	}
	return m, nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
